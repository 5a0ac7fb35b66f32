import type { WorkerClaim, WorkerHolding, WorkerIdSource } from './worker-id-source.port';
import { WorkerLeaseCommitter } from './worker-lease.committer';
import type { SnowflakeWorkerInfo } from './worker-listing';
import type { StartContext } from './worker-start.plan';
import type { WorkerIdentity } from './worker-state';

/**
 * {@link WorkerIdSource} of a worker ID the instance knows by itself: configured (`embedded`)
 * or a StatefulSet ordinal without ZooKeeper (`ordinal`), bound by this host's state file.
 */
export class LocalWorkerIdSource implements WorkerIdSource {
  readonly kind: string;

  /** @param ordinalOf the StatefulSet pod's host name the ID was read from; none: configured. */
  constructor(
    readonly workerId: number,
    private readonly ordinalOf: string | null = null,
  ) {
    this.kind = ordinalOf === null ? 'embedded' : 'ordinal';
  }

  describe(): string {
    return `${this.kind} worker ID ${this.workerId}`;
  }

  identity(name: string): WorkerIdentity {
    return { kind: 'embedded', name, workerId: this.workerId };
  }

  /** @throws {WorkerStateCorruptError} when the state file is unusable. */
  async claim({ options, file, logger, run }: StartContext): Promise<WorkerClaim> {
    const cache = await file.read();
    if (cache.status === 'corrupt') throw cache.error;
    const state = cache.status === 'ok' ? cache.state : null;
    return {
      plan: {
        workerId: this.workerId,
        // No file: the first run of this worker ID here; nothing to wait for.
        bound: state ? state.reservedUntil : options.clock.now() - 1,
        source: state ? `state file ${file.path}` : 'no earlier run (no state file)',
        cached: state,
      },
      committer: new WorkerLeaseCommitter(
        file,
        null,
        { workerId: this.workerId, localRunwayMs: options.snowflake.localRunwayMs, run },
        logger,
      ),
      release: () => Promise.resolve(),
      snapshot: () => ({ identity: this.kind, nodePath: null, zookeeper: null, database: null }),
    };
  }

  /** A configured worker ID's holding: nobody records which instance used it. */
  async holderAt(_name: string, workerId: number): Promise<WorkerHolding> {
    return {
      note: `worker IDs are configured here (${this.ordinalOf !== null ? `ordinal of ${this.ordinalOf}` : 'explicit'}): nobody records which instance used worker ID ${workerId}`,
    };
  }

  async list(): Promise<SnowflakeWorkerInfo[]> {
    return [];
  }

  async close(): Promise<void> {}
}
