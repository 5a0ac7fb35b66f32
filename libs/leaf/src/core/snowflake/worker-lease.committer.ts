import type { SnowflakeLogger } from './snowflake-logger';
import { recordFinalLease, type LeaseCommit, type LeaseCommitter } from './time-lease';
import type { WorkerStateStore } from './worker-state';
import type { WorkerLeaseRecord } from './zookeeper-worker.registry';
import { messageOf } from '../errors/leaf.error';

/** The remote copy of the lease (the worker's ZooKeeper node). */
export interface LeaseRemote {
  /**
   * False while ZooKeeper is disconnected, the registration is not verified, or this
   * session does not hold the liveness node: writes are not even tried.
   */
  readonly available: boolean;
  /**
   * Set (to the reason) while the lease must not be extended at all, not even locally: the
   * session that held the liveness node is known to have expired, so a successor may
   * already hold the worker ID.
   */
  readonly fenced: string | null;
  /**
   * Writes `record` to the node, within a bounded time.
   * @throws when the write failed or timed out (it may still have been applied).
   */
  write(record: WorkerLeaseRecord): Promise<void>;
}

/** Settings of a {@link WorkerLeaseCommitter}. */
export interface WorkerLeaseCommitterOptions {
  readonly workerId: number;
  /** The ZooKeeper node path recorded in the state file. @default null (embedded mode) */
  readonly zkNode?: string | null;
  /** Each remote write records a horizon this far past its time (see {@link WorkerLeaseRecord.horizon}). */
  readonly localRunwayMs: number;
  /** This run's random id, recorded with every write. */
  readonly run: string;
  /**
   * What the node records as this run starts: the local time of its last write and its
   * horizon. @default null (no node, or one created by this run)
   */
  readonly remote?: { readonly writtenAt: number | null; readonly horizon: number | null } | null;
}

/**
 * Makes lease bounds durable in the local state file and, with ZooKeeper, in the worker's
 * node (docs/design.md, "Snowflake safety").
 *
 * - The local file is written on every extension and must succeed: it is what a restart
 *   on this host trusts, so the bound in force never exceeds it.
 * - ZooKeeper is written first, and only while this session holds the liveness node. Each
 *   write records the bound and a horizon, `max(bound, now + localRunwayMs)`: the furthest
 *   this run may extend its lease without writing the node again. A successor that cannot
 *   prove this run has stopped waits past the horizon it finds in the node.
 * - When ZooKeeper cannot be written, the bound is extended in the local file only, up to
 *   the horizon last recorded in the node and never further; the runway is the writer's own
 *   setting, read by successors from the node, so hosts with different settings stay safe.
 * - Once the session is known to have expired ({@link LeaseRemote.fenced}), nothing is
 *   extended, not even locally, until the liveness node is held again.
 * - A remote write that timed out may land later; it only ever raises the stored bound and
 *   horizon, so successors stay on the safe side.
 */
export class WorkerLeaseCommitter implements LeaseCommitter {
  /** True once this run wrote the node (the lease or the release). */
  wroteRemote = false;
  /** Local time of the last successful ZooKeeper write, `null` if none. */
  lastRemoteWrite: number | null;
  private horizon: number;

  constructor(
    private readonly file: WorkerStateStore,
    private readonly remote: LeaseRemote | null,
    private readonly options: WorkerLeaseCommitterOptions,
    private readonly logger: SnowflakeLogger,
  ) {
    this.lastRemoteWrite = options.remote?.writtenAt ?? null;
    this.horizon = options.remote?.horizon ?? Number.NEGATIVE_INFINITY;
  }

  /** The horizon the node records (local-only extensions stop there); `null` in embedded mode. */
  get recordedHorizon(): number | null {
    return this.remote && Number.isFinite(this.horizon) ? this.horizon : null;
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
      let failure = this.remote.fenced;
      if (failure === null && !this.remote.available) {
        failure = 'ZooKeeper is not connected';
      } else if (failure === null) {
        // Never lower the node's bound below one already in force (the clock may have been
        // stepped back since): a restart without the state file trusts the node.
        const reservedUntil = Math.max(target, current);
        const horizon = Math.max(reservedUntil, now + this.options.localRunwayMs);
        try {
          await this.writeRemote(this.remote, now, reservedUntil, horizon);
          remoteWritten = true;
        } catch (error) {
          // The write may have found the session expired meanwhile.
          failure = this.remote.fenced ?? `the ZooKeeper write failed (${messageOf(error)})`;
        }
      }
      if (failure !== null) {
        // Once fenced, not even the local runway is left.
        const cap = this.remote.fenced !== null ? Number.NEGATIVE_INFINITY : this.horizon;
        granted = Math.min(target, cap);
        degraded =
          granted > now
            ? `${failure}; extended in the local state file only, up to the horizon recorded in ZooKeeper (${new Date(this.horizon).toISOString()}, localRunwayMs after the last ZooKeeper write)`
            : Number.isFinite(cap)
              ? `${failure} and the local runway is used up (the horizon recorded in ZooKeeper, localRunwayMs after the last write, was ${new Date(cap).toISOString()})`
              : `${failure}; no local extension is possible${this.remote.fenced === null ? ' (no horizon recorded in ZooKeeper yet)' : ''}`;
      }
    }
    // Nothing new to record: keep the file as it is (it already holds `current`).
    if (granted <= current && !remoteWritten) return { granted, degraded };
    await this.writeFile(Math.max(granted, current), now);
    return { granted, degraded };
  }

  /** See {@link LeaseCommitter.release}. Never throws. */
  async release(final: number, now: number): Promise<void> {
    // Lowering the stored bound and horizon to the last millisecond really used is safe only
    // because nothing is issued any more; a failed write leaves higher ones, also safe.
    if (this.remote?.available && this.remote.fenced === null) {
      try {
        await this.writeRemote(this.remote, now, final, final);
      } catch (error) {
        this.logger.warn(`Could not record the final time lease in ZooKeeper: ${String(error)}`);
      }
    }
    await recordFinalLease(this.file.path, () => this.writeFile(final, now), this.logger);
  }

  private async writeRemote(
    remote: LeaseRemote,
    now: number,
    reservedUntil: number,
    horizon: number,
  ): Promise<void> {
    await remote.write({ timestamp: now, reservedUntil, horizon, run: this.options.run });
    this.lastRemoteWrite = now;
    this.horizon = horizon;
    this.wroteRemote = true;
  }

  private writeFile(reservedUntil: number, now: number): Promise<void> {
    return this.file.write({
      workerId: this.options.workerId,
      reservedUntil,
      zkNode: this.options.zkNode ?? null,
      zkSyncedAt: this.lastRemoteWrite,
      zkHorizon: this.recordedHorizon,
      run: this.options.run,
      updatedAt: now,
    });
  }
}
