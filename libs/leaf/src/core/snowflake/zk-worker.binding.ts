import { withTimeout } from '../with-timeout';
import { isZkError, ZkError, type ZkClient } from '../zookeeper/zk-client.port';
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
  /** See {@link LeaseRemote.fenced}. */
  fenced: string | null = null;
  /**
   * Bumped whenever the session is lost, so the outcome of an older call is not trusted: pass
   * it to {@link aliveAcquired} to tie a create to the session it ran in.
   */
  sessionEpoch = 0;

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
    /** Whether the current session holds the liveness node. */
    public aliveHeld: boolean,
    private readonly timeoutMs: number,
    /**
     * This run's id, and the run the node recorded at start: lease writes are conditional on
     * the node's version, so a write after someone else's fails (docs/design.md, "Reclaiming
     * worker IDs"); a node last written by any other run was taken over.
     */
    private readonly run: string,
    private nodeRun: string | undefined,
    /** The node's version after our last write (`null`: unknown, read before the next write). */
    private version: number | null,
  ) {}

  get available(): boolean {
    return (
      this.zk.connected &&
      this.verified &&
      this.nodePath !== null &&
      this.aliveHeld &&
      this.fenced === null
    );
  }

  /**
   * The session that held the liveness node expired (ZooKeeper deleted the node with it):
   * stop extending the lease until {@link aliveAcquired}.
   */
  sessionLost(
    reason = 'the ZooKeeper session that held the liveness node expired; the lease is not extended until the node is held again',
  ): void {
    this.sessionEpoch++;
    this.version = null;
    this.aliveHeld = false;
    if (this.verified) this.fenced ??= reason;
  }

  /**
   * The liveness node was created in the session of `epoch` and the node shows no other
   * writer: writes may resume. Ignored when the session was lost since.
   * @returns whether it was taken into account.
   */
  aliveAcquired(epoch: number): boolean {
    if (epoch !== this.sessionEpoch) return false;
    this.aliveHeld = true;
    this.fenced = null;
    return true;
  }

  /**
   * Confirms a start from the state file: the node is `path`, last written by `nodeRun`; its
   * version is read before the next write.
   */
  confirm(path: string, nodeRun: string | undefined): void {
    this.nodePath = path;
    this.verified = true;
    this.nodeRun = nodeRun;
    this.version = null;
  }

  async write(record: WorkerLeaseRecord): Promise<void> {
    const path = this.nodePath;
    if (path === null) throw new ZkError('NO_NODE', 'no worker node is bound yet');
    const epoch = this.sessionEpoch;
    const write = () =>
      zkWithin(this.registry.write(path, record, this.version!), this.timeoutMs, `writing ${path}`);
    try {
      if (this.version === null) await this.readVersion(path);
      try {
        await write();
      } catch (error) {
        if (!isZkError(error, 'BAD_VERSION')) throw error;
        // Our own earlier write whose reply was lost, or another process's: look.
        await this.readVersion(path);
        await write();
      }
      this.version! += 1;
      this.nodeRun = record.run;
    } catch (error) {
      // Applied or not, the version is unknown now.
      this.version = null;
      if (isZkError(error, 'NO_NODE')) {
        this.onNodeGone?.(
          `the worker node ${path} no longer exists in ZooKeeper, so the worker ID of ${this.registry.identity} may be reassigned; restart the instance to register again`,
        );
      } else if (isZkError(error, 'SESSION_EXPIRED') && epoch === this.sessionEpoch) {
        this.sessionLost();
      }
      throw error;
    }
  }

  /**
   * Reads the node's version, after checking that its last writer is this run (or the run
   * it started from). Another writer means another process took the worker ID over: the
   * worker stops issuing ({@link onNodeGone}).
   * @throws {ZkError} `BAD_VERSION` when taken over; other ZooKeeper failures.
   */
  private async readVersion(path: string): Promise<void> {
    const { data, version } = await zkWithin(
      this.registry.readVersioned(path),
      this.timeoutMs,
      `reading ${path}`,
    );
    if (data.run !== this.run && data.run !== this.nodeRun) {
      const reason = `worker ID of ${path} was taken over by ${data.ip}:${data.port} (run ${data.run ?? 'unknown'}) while this run was cut off; this run stops issuing (self-fencing) and must be restarted`;
      this.onNodeGone?.(reason);
      throw new ZkError('BAD_VERSION', reason);
    }
    this.version = version;
  }
}
