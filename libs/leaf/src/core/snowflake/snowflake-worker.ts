import type { SnowflakeGenerator, SnowflakeGeneratorSnapshot } from './snowflake-generator';
import type { SnowflakeLayout } from './snowflake-layout';
import type { SnowflakeWorkerOptions } from './snowflake-worker.options';
import type { RegionLeaseSnapshot } from './region-lease';
import type { TimeLease, TimeLeaseSnapshot } from './time-lease';
import { assembleWorker, type AssembledWorker } from './worker-start.assembly';
import type { WorkerClaimSnapshot } from './worker-id-source.port';

/** How the worker ID was assigned: its source's `kind` (`zookeeper`, `embedded`, `ordinal`, `database`). */
export type SnowflakeWorkerMode = string;

/** Monitoring view of a running worker (its source's part: {@link WorkerClaimSnapshot}). */
export interface SnowflakeWorkerSnapshot extends WorkerClaimSnapshot {
  readonly mode: SnowflakeWorkerMode;
  readonly workerId: number;
  readonly stateFile: string;
  readonly startedAt: number;
  /** The persisted bound the clock had to pass at start, and where it came from. */
  readonly startupBound: number;
  readonly startupBoundSource: string;
  readonly startupWaitMs: number;
  /** This run's random id, recorded in the node, the state file and the liveness node. */
  readonly run: string;
  /** The lock file held for the whole life of the worker. */
  readonly lockFile: string;
  readonly lease: TimeLeaseSnapshot;
  readonly generator: SnowflakeGeneratorSnapshot;
  /** The region's lease on the data-centre ID (`null`: assigned by hand). */
  readonly region: RegionLeaseSnapshot | null;
}

/** Whether the worker can issue an ID now, and if not, why. */
export interface SnowflakeReadiness {
  readonly ready: boolean;
  readonly reason: string | null;
}

/**
 * One snowflake worker: its worker ID, time lease and generator, and what keeps them
 * valid (ZooKeeper state changes, the heartbeat). Plain TypeScript, no Nest. The safety
 * argument is in docs/design.md, "Snowflake safety".
 *
 * Start-up ({@link SnowflakeWorker.start}):
 * 1. The state file's lock: a second process on the same identity and state directory
 *    refuses ({@link WorkerStateLockedError}).
 * 2. Worker ID: with ZooKeeper, register `ip:port` (reuse its node or create one) and take
 *    the liveness node `/snowflake/{name}/alive/{workerId}`; if ZooKeeper cannot be reached
 *    within `connectTimeoutMs`, start from the local state file (no file or an unusable one
 *    → refuse). Embedded: the configured ID.
 * 3. Bound: see {@link startupBoundFromNode}; embedded, the state file's lease.
 * 4. Wait (up to `startupMaxWaitMs`) until the clock is past the bound, else refuse.
 * 5. Extend the lease once, durably, before the first ID; refuse if that fails.
 *
 * Liveness guard (with ZooKeeper): a liveness node held by another session that does not
 * disappear within `sessionTimeoutMs` + a margin (a crashed previous run's would) means
 * another live process advertises the same `ip:port`: start-up refuses
 * ({@link WorkerIdInUseError}). After start-up, {@link WorkerSessionGuard} follows the
 * session (fencing after an expiry, the liveness node taken again). A graceful stop deletes
 * the node.
 *
 * The parts are put together by {@link assembleWorker}.
 */
export class SnowflakeWorker {
  private stopped = false;
  /** The time lease. */
  readonly lease: TimeLease;
  /** The generator; issues IDs only within the lease. */
  readonly generator: SnowflakeGenerator;
  /** The bit layout (epoch) in use. */
  readonly layout: SnowflakeLayout;
  /** This run's random id. */
  readonly run: string;

  private constructor(private readonly parts: AssembledWorker) {
    this.lease = parts.lease;
    this.generator = parts.generator;
    this.layout = parts.layout;
    this.run = parts.run;
  }

  /**
   * Locks the state file, assigns the worker ID, checks the clock against the persisted
   * lease and extends it.
   * @throws {WorkerStateLockedError} another running process uses the same state file.
   * @throws {WorkerIdUnavailableError} ZooKeeper unreachable and no state file, or no ZooKeeper client given.
   * @throws {WorkerStateCorruptError} the state file (when needed) or the node data is unusable.
   * @throws {WorkerIdExhaustedError} the node's sequence is 1024 or more.
   * @throws {WorkerIdInUseError} another live process (same `ip:port`) holds the worker ID.
   * @throws {StartupClockBehindError} the clock did not pass the bound within `startupMaxWaitMs`.
   * @throws {TimeLeaseUnavailableError} the first extension could not be made durable.
   */
  static async start(options: SnowflakeWorkerOptions): Promise<SnowflakeWorker> {
    const worker = new SnowflakeWorker(await assembleWorker(options));
    const { logger, plan, lease, layout, run, startBoundSource } = worker.parts;
    logger.log(`Snowflake layout: ${layout.describe()}`);
    // The bound's source also when start-up did not wait for it (the wait's line names it too).
    logger.log(
      `Snowflake worker ${plan.workerId} started (${[worker.mode, worker.parts.claim.snapshot().nodePath].filter(Boolean).join(', ')}, run ${run}); time lease until ${new Date(lease.reservedUntil).toISOString()}; started past ${startBoundSource}`,
    );
    return worker;
  }

  /** The worker ID. */
  get workerId(): number {
    return this.parts.plan.workerId;
  }

  /** Where the worker ID came from. */
  get mode(): SnowflakeWorkerMode {
    return this.parts.options.source.kind;
  }

  /**
   * One heartbeat: confirms a pending registration if ZooKeeper is back, takes the liveness
   * node again if the session lost it, then extends the lease to `now + leaseMs` (ZooKeeper
   * node and state file).
   * @throws {TimeLeaseUnavailableError} when the extension failed entirely.
   */
  async heartbeat(): Promise<void> {
    if (this.stopped) return;
    await this.parts.claim.beforeExtend?.();
    await this.lease.extend();
  }

  /**
   * One renewal of the region's lease (none without a region); a time lease the region had
   * capped is extended again at once.
   * @throws {RegionLeaseUnavailableError} when the renewal failed or found the lease lost.
   */
  async renewRegion(): Promise<void> {
    const region = this.parts.options.region;
    if (this.stopped || !region) return;
    await region.renew();
    if (this.lease.snapshot().degraded !== null) await this.lease.extend();
  }

  /** Whether an ID can be issued now. Never throws. */
  readiness(): SnowflakeReadiness {
    const now = this.parts.options.clock.now();
    const lease = this.lease.snapshot();
    const last = this.generator.lastIssuedTimestamp;
    const notReady = (reason: string): SnowflakeReadiness => ({ ready: false, reason });
    if (this.stopped || lease.closed) return notReady('stopped');
    if (lease.revoked !== null) return notReady(lease.revoked);
    const region = this.parts.options.region?.problem(now) ?? null;
    if (region !== null) return notReady(region);
    if (now > this.layout.maxTimestamp)
      return notReady(`the timestamp no longer fits ${this.layout.spec.timestampBits} bits`);
    if (now < last - this.parts.options.snowflake.clockBackwardsToleranceMs)
      return notReady(`the clock is ${last - now} ms behind the last issued timestamp`);
    if (now > lease.reservedUntil)
      return notReady(
        `the time lease ended at ${lease.reservedUntil}${lease.lastError ? `: ${lease.lastError}` : ''}`,
      );
    return { ready: true, reason: null };
  }

  /** Monitoring view. */
  snapshot(): SnowflakeWorkerSnapshot {
    const claim = this.parts.claim.snapshot();
    return {
      mode: this.mode,
      workerId: this.workerId,
      identity: claim.identity,
      nodePath: claim.nodePath,
      stateFile: this.parts.file.path,
      startedAt: this.parts.startedAt,
      startupBound: this.parts.startBound,
      startupBoundSource: this.parts.startBoundSource,
      startupWaitMs: this.parts.startupWaitMs,
      zookeeper: claim.zookeeper,
      database: claim.database,
      run: this.run,
      lockFile: this.parts.lock.path,
      lease: this.lease.snapshot(),
      generator: this.generator.snapshot(),
      region: this.parts.options.region?.snapshot(this.parts.options.clock.now()) ?? null,
    };
  }

  /**
   * Stops issuing, waits for an extension in flight and records the last millisecond used as
   * the final bound and horizon, so a graceful restart need not wait out the lease or the
   * runway; then deletes the liveness node, so a restart with the same identity need not wait
   * for the session to end; then releases the state lock. Never throws; does not close the
   * ZooKeeper client.
   */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    await this.parts.claim.stop?.();
    await this.lease.release(() => this.generator.lastIssuedTimestamp);
    await this.parts.claim.release(false);
    await this.parts.lock.release();
  }
}
