import type { SnowflakeLogger } from './snowflake-logger';
import type { LeaseCommit, LeaseCommitter } from './time-lease';
import type { WorkerStateFile } from './worker-state.file';

/** The remote copy of the lease (the worker's ZooKeeper node). */
export interface LeaseRemote {
  /** False while ZooKeeper is disconnected or the registration is not verified: writes are not even tried. */
  readonly available: boolean;
  /**
   * Writes `{ timestamp: now, reservedUntil }` to the node, within a bounded time.
   * @throws when the write failed or timed out (it may still have been applied).
   */
  write(reservedUntil: number, now: number): Promise<void>;
}

/** Settings of a {@link WorkerLeaseCommitter}. */
export interface WorkerLeaseCommitterOptions {
  readonly workerId: number;
  /** The ZooKeeper node path recorded in the state file; `null` in embedded mode. */
  readonly zkNode: string | null;
  /** Local-only extensions reach at most this far past the last successful remote write. */
  readonly localRunwayMs: number;
  /** Local time of the last successful remote write known at start (`null`: none). */
  readonly lastRemoteWriteAt: number | null;
}

/**
 * Makes lease bounds durable in the local state file and, with ZooKeeper, in the worker's
 * node.
 *
 * - The local file is written on every extension and must succeed: it is what a restart
 *   with ZooKeeper down trusts, so the bound in force never exceeds it.
 * - ZooKeeper is written first; when that fails the bound is extended in the local file
 *   only, up to `localRunwayMs` after the last successful ZooKeeper write, then no further.
 *   A restart that finds the node but no state file assumes that runway was used.
 * - A remote write that timed out may land later; it only ever raises the stored bound, so
 *   restarts stay on the safe side.
 */
export class WorkerLeaseCommitter implements LeaseCommitter {
  private lastRemoteWriteAt: number | null;

  constructor(
    private readonly file: WorkerStateFile,
    private readonly remote: LeaseRemote | null,
    private readonly options: WorkerLeaseCommitterOptions,
    private readonly logger: SnowflakeLogger,
  ) {
    this.lastRemoteWriteAt = options.lastRemoteWriteAt;
  }

  /** Local time of the last successful ZooKeeper write, `null` if none. */
  get lastRemoteWrite(): number | null {
    return this.lastRemoteWriteAt;
  }

  /**
   * See {@link LeaseCommitter.commit}.
   * @throws the file system's error when the state file cannot be written (nothing is granted).
   */
  async commit(target: number, now: number, current: number): Promise<LeaseCommit> {
    let granted = target;
    let degraded: string | undefined;
    let remoteWritten = false;
    if (this.remote) {
      let failure: string | null = null;
      if (!this.remote.available) {
        failure = 'ZooKeeper is not connected';
      } else {
        try {
          // Never lower the node's bound below one already in force (the clock may have been
          // stepped back since): a restart without the state file trusts the node.
          await this.remote.write(Math.max(target, current), now);
          this.lastRemoteWriteAt = now;
          remoteWritten = true;
        } catch (error) {
          failure = `the ZooKeeper write failed (${error instanceof Error ? error.message : String(error)})`;
        }
      }
      if (failure !== null) {
        const cap =
          this.lastRemoteWriteAt === null
            ? Number.NEGATIVE_INFINITY
            : this.lastRemoteWriteAt + this.options.localRunwayMs;
        granted = Math.min(target, cap);
        degraded =
          granted > now
            ? `${failure}; extended in the local state file only, at most ${this.options.localRunwayMs} ms (localRunwayMs) past the last ZooKeeper write`
            : `${failure} and the local runway (localRunwayMs = ${this.options.localRunwayMs} ms after the last ZooKeeper write${
                this.lastRemoteWriteAt === null
                  ? ', of which there was none'
                  : ` at ${new Date(this.lastRemoteWriteAt).toISOString()}`
              }) is used up`;
      }
    }
    // Nothing new to record: keep the file as it is (it already holds `current`).
    if (granted <= current && !remoteWritten) return { granted, degraded };
    await this.file.write({
      workerId: this.options.workerId,
      reservedUntil: Math.max(granted, current),
      zkNode: this.options.zkNode,
      zkSyncedAt: this.lastRemoteWriteAt,
      updatedAt: now,
    });
    return { granted, degraded };
  }

  /** See {@link LeaseCommitter.release}. Never throws. */
  async release(final: number, now: number): Promise<void> {
    // Lowering the stored bound to the last millisecond really used is safe only because
    // nothing is issued any more; a failed write leaves a higher bound, which is also safe.
    if (this.remote?.available) {
      try {
        await this.remote.write(final, now);
        this.lastRemoteWriteAt = now;
      } catch (error) {
        this.logger.warn(`Could not record the final time lease in ZooKeeper: ${String(error)}`);
      }
    }
    try {
      await this.file.write({
        workerId: this.options.workerId,
        reservedUntil: final,
        zkNode: this.options.zkNode,
        zkSyncedAt: this.lastRemoteWriteAt,
        updatedAt: now,
      });
    } catch (error) {
      this.logger.warn(
        `Could not record the final time lease in ${this.file.path}: ${String(error)}`,
      );
    }
  }
}
