import type { ZkError } from '../../core/zookeeper/zk-client.port';

interface ConnectWaiter {
  resolve: () => void;
  reject: (error: ZkError) => void;
  timer: NodeJS.Timeout;
}

/** The callers of `ZookeeperClient.connect()` waiting for a session, each with its deadline. */
export class SessionWaiters {
  private readonly waiters = new Set<ConnectWaiter>();

  /**
   * Resolves when a session connects ({@link resolveAll}); rejects with `timedOut()` after
   * `timeoutMs`, or with the error of {@link rejectAll}.
   */
  wait(timeoutMs: number, timedOut: () => ZkError): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const waiter: ConnectWaiter = {
        resolve,
        reject,
        timer: setTimeout(() => {
          this.waiters.delete(waiter);
          reject(timedOut());
        }, timeoutMs),
      };
      this.waiters.add(waiter);
    });
  }

  /** A session connected: every waiter resolves. */
  resolveAll(): void {
    for (const waiter of this.waiters) {
      clearTimeout(waiter.timer);
      waiter.resolve();
    }
    this.waiters.clear();
  }

  /** The client closed: every waiter rejects with `error`. */
  rejectAll(error: ZkError): void {
    for (const waiter of this.waiters) {
      clearTimeout(waiter.timer);
      waiter.reject(error);
    }
    this.waiters.clear();
  }
}
