import { withTimeout } from '../with-timeout';
import { ZkError, type ZkClient } from '../zookeeper/zk-client.port';
import type { LeaseRemote } from './worker-lease.committer';
import type { WorkerLeaseRecord, ZookeeperWorkerRegistry } from './zookeeper-worker.registry';

/**
 * `promise`'s value if it settles within `ms`, else a `ZkError('TIMEOUT')` naming `what`:
 * every ZooKeeper step of the worker is bounded so a hung server cannot stall it.
 */
export async function zkWithin<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  const result = await withTimeout(promise, ms);
  if (!result.ok) throw new ZkError('TIMEOUT', `${what} took longer than ${ms} ms`);
  return result.value;
}

/**
 * The worker's ZooKeeper node as the lease sees it (docs/design.md, "Snowflake safety").
 * Writable only while connected, once the registration is confirmed, and while the current
 * session holds the liveness node: a write from a session that may have lost the worker ID
 * would extend a lease a successor never sees.
 *
 * Once the session holding the liveness node is known to have expired (the client reports
 * it, or a write fails with `SESSION_EXPIRED`), the binding is fenced: the lease is not
 * extended at all, not even locally, until the liveness node is held again.
 */
export class ZkWorkerBinding implements LeaseRemote {
  private holdsAlive: boolean;
  private fencedReason: string | null = null;
  /** Bumped whenever the session is lost, so the outcome of an older call is not trusted. */
  private epoch = 0;

  /**
   * Called when the worker's node turns out to be gone (deleted by hand, or ZooKeeper lost
   * its data): its sequence may be handed to a new instance at any moment, so the worker
   * must stop issuing at once instead of riding out the local runway.
   */
  onNodeGone: ((reason: string) => void) | null = null;

  constructor(
    private readonly zk: ZkClient,
    readonly registry: ZookeeperWorkerRegistry,
    public nodePath: string | null,
    public verified: boolean,
    aliveHeld: boolean,
    private readonly timeoutMs: number,
  ) {
    this.holdsAlive = aliveHeld;
  }

  get available(): boolean {
    return (
      this.zk.connected &&
      this.verified &&
      this.nodePath !== null &&
      this.holdsAlive &&
      this.fencedReason === null
    );
  }

  get fenced(): string | null {
    return this.fencedReason;
  }

  /** Whether the current session holds the liveness node. */
  get aliveHeld(): boolean {
    return this.holdsAlive;
  }

  /** The session epoch: pass it to {@link aliveAcquired} to tie a create to the session it ran in. */
  get sessionEpoch(): number {
    return this.epoch;
  }

  /**
   * The session that held the liveness node expired (ZooKeeper deleted the node with it):
   * stop extending the lease until {@link aliveAcquired}.
   */
  sessionLost(reason: string): void {
    this.epoch++;
    this.holdsAlive = false;
    if (this.verified) this.fencedReason ??= reason;
  }

  /**
   * The liveness node was created in the session of `epoch` and the node shows no other
   * writer: writes may resume. Ignored when the session was lost since.
   * @returns whether it was taken into account.
   */
  aliveAcquired(epoch: number): boolean {
    if (epoch !== this.epoch) return false;
    this.holdsAlive = true;
    this.fencedReason = null;
    return true;
  }

  async write(record: WorkerLeaseRecord): Promise<void> {
    const path = this.nodePath;
    if (path === null) throw new ZkError('NO_NODE', 'no worker node is bound yet');
    const epoch = this.epoch;
    try {
      await zkWithin(this.registry.write(path, record), this.timeoutMs, `writing ${path}`);
    } catch (error) {
      if (error instanceof ZkError && error.zkCode === 'NO_NODE') {
        this.onNodeGone?.(
          `the worker node ${path} no longer exists in ZooKeeper, so the worker ID of ${this.registry.identity} may be reassigned; restart the instance to register again`,
        );
      } else if (
        error instanceof ZkError &&
        error.zkCode === 'SESSION_EXPIRED' &&
        epoch === this.epoch
      ) {
        this.sessionLost(
          'the ZooKeeper session that held the liveness node expired; the lease is not extended until the node is held again',
        );
      }
      throw error;
    }
  }
}
