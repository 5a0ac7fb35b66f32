import type { RemoteCaller, RemoteRequest } from './remote-caller';

/** What {@link RemoteCalls} needs from its client. */
export interface RemoteCallsHost {
  readonly caller: RemoteCaller;
  readonly requestTimeoutMs: number;
  /** Resolves once a server is known. @throws {ShuttingDownError} once the client is closed. */
  ready(): Promise<void>;
}

/**
 * The remote client's requests through its servers, counted in flight until they settle so
 * that the client's `close()` can wait for them.
 */
export class RemoteCalls {
  private readonly requests = new Set<Promise<unknown>>();

  constructor(private readonly host: RemoteCallsHost) {}

  /** Resolves once every request tracked so far has settled. Never rejects. */
  async settled(): Promise<void> {
    await Promise.all([...this.requests]);
  }

  /** `request`, counted in flight until it settles. */
  track<T>(request: Promise<T>): Promise<T> {
    const settled = request.catch(() => undefined);
    this.requests.add(settled);
    void settled.finally(() => this.requests.delete(settled));
    return request;
  }

  /**
   * Sends `request` with the client's request timeout once a server is known, tracked.
   * @throws {ShuttingDownError} once the client is closed; the request's own errors.
   */
  async send<T>(request: Omit<RemoteRequest<T>, 'timeoutMs'>): Promise<T> {
    const host = this.host;
    await host.ready();
    return this.track(host.caller.request({ ...request, timeoutMs: host.requestTimeoutMs }));
  }
}
