import { SnowflakeNotReadyError } from '../../core/errors/snowflake-not-ready.error';
import {
  Inject,
  Injectable,
  Logger,
  Optional,
  type BeforeApplicationShutdown,
  type OnApplicationShutdown,
  type OnModuleDestroy,
  type OnModuleInit,
} from '@nestjs/common';
import { assertValidCount, assertValidKey } from '../../core/arguments';
import { ShuttingDownError } from '../../core/errors/shutting-down.error';
import { WorkerIdUnavailableError } from '../../core/errors/worker-id-unavailable.error';
import {
  LEAF_REGION_REGISTRY,
  LEAF_RESOLVED_OPTIONS,
  LEAF_WORKER_ID_SOURCE,
} from '../leaf.constants';
import { monotonicMs } from '../../core/leaf-observer';
import { RegionLease } from '../../core/snowflake/region-lease';
import type { RegionRegistry } from '../../core/snowflake/region-registry.port';
import { modeOptions } from '../leaf-modes';
import { WorkerStateFile } from '../../adapters/fs/worker-state.file';
import type { ResolvedLeafOptions, ResolvedSnowflakeOptions } from '../leaf-options.interface';
import type { SnowflakeGenerator } from '../../core/snowflake/snowflake-generator';
import type { DecodedSnowflakeId, SnowflakeLayout } from '../../core/snowflake/snowflake-layout';
import { snowflakeLayoutOf } from '../../core/snowflake/snowflake-settings';
import type { SnowflakeWorkerInfo } from '../../core/snowflake/worker-listing';
import type { WorkerIdSource } from '../../core/snowflake/worker-id-source.port';
import {
  SnowflakeWorker,
  type SnowflakeReadiness,
  type SnowflakeWorkerSnapshot,
} from '../../core/snowflake/snowflake-worker';
import { LeafEventRecorder } from '../metrics/leaf-event.recorder';

/** Monitoring view of snowflake mode. */
export interface SnowflakeStatus {
  /** True once the worker ID is assigned and the lease extended. */
  readonly started: boolean;
  readonly closing: boolean;
  /** Whether an ID can be issued now, and why not. */
  readonly readiness: SnowflakeReadiness;
  /** `null` before start. */
  readonly worker: SnowflakeWorkerSnapshot | null;
}

/**
 * Leaf-snowflake: time-based 64-bit IDs (as bigint) from a worker ID assigned through
 * ZooKeeper, or configured (embedded mode), protected by a persisted time lease.
 *
 * The worker ID is assigned and the clock checked in `onModuleInit`; a refusal there fails
 * the application's start with a typed error. {@link SnowflakeHeartbeatJob} keeps the lease
 * ahead of the clock. `LeafModule` provides it only with snowflake mode on.
 */
@Injectable()
export class SnowflakeService
  implements OnModuleInit, OnModuleDestroy, BeforeApplicationShutdown, OnApplicationShutdown
{
  private readonly logger = new Logger(SnowflakeService.name);
  private readonly options: ResolvedSnowflakeOptions;
  /**
   * The epoch and bit split of this service's IDs: what `decodeId` from `nestjs-leaf/formats`
   * reads them with, and UUIDv7 and TypeID are made with (`IdService.getTexts`).
   */
  readonly layout: SnowflakeLayout;
  private worker: SnowflakeWorker | null = null;
  private generator: SnowflakeGenerator | null = null;
  /** False once the source is closed. */
  private sourceOpen = true;
  private closing = false;
  /** Set at the first shutdown hook: readiness goes down while requests in flight are still served. */
  private shuttingDown = false;
  constructor(
    @Inject(LEAF_RESOLVED_OPTIONS) private readonly leafOptions: ResolvedLeafOptions,
    @Inject(LEAF_WORKER_ID_SOURCE) private readonly source: WorkerIdSource,
    /** Metrics and clock-event logs (LeafModule provides it; absent when built by hand). */
    @Optional() private readonly events?: LeafEventRecorder,
    @Optional()
    @Inject(LEAF_REGION_REGISTRY)
    private readonly regionRegistry: RegionRegistry | null = null,
  ) {
    this.options = modeOptions(leafOptions, 'snowflake');
    this.layout = snowflakeLayoutOf(this.options);
  }

  /** The worker ID in use; `null` before start. */
  get workerId(): number | null {
    return this.worker?.workerId ?? null;
  }

  /**
   * Assigns the worker ID and checks the clock against the persisted lease.
   * @throws {WorkerIdUnavailableError} ZooKeeper unreachable at start and no state file.
   * @throws {WorkerStateCorruptError} the state file (when needed) or the node data is unusable.
   * @throws {WorkerIdExhaustedError} this identity's node sequence is 1024 or more.
   * @throws {StartupClockBehindError} the clock did not pass the persisted lease within `startupMaxWaitMs`.
   * @throws {TimeLeaseUnavailableError} the lease could not be extended before the first ID.
   * @throws {DataCenterHeldError} another region leases the data-centre ID (`snowflake.region`).
   * @throws {RegionLeaseUnavailableError} the region registry did not answer within `startupMaxWaitMs`.
   */
  async onModuleInit(): Promise<void> {
    const options = this.options;
    try {
      // The region's lease on the data-centre ID (`snowflake.region`), or none (assigned by hand).
      const region =
        options.region && this.regionRegistry
          ? await RegionLease.claim(
              {
                name: this.leafOptions.name,
                registry: this.regionRegistry,
                clock: this.leafOptions.clock,
                monotonic: monotonicMs,
                startupMaxWaitMs: options.startupMaxWaitMs,
                logger: this.logger,
              },
              options.region,
            )
          : null;
      this.worker = await SnowflakeWorker.start({
        region,
        name: this.leafOptions.name,
        snowflake: options,
        clock: this.leafOptions.clock,
        source: this.source,
        stateStore: (identity) => new WorkerStateFile(options.stateDir, identity),
        logger: this.logger,
        observer: this.events,
      });
    } catch (error) {
      // Nest does not run shutdown hooks after a failed init: release the client here.
      this.sourceOpen = false;
      await this.source.close().catch(() => undefined);
      throw error;
    }
    this.generator = this.worker.generator;
  }

  /** Readiness reports "shutting down" from the first shutdown hook on. */
  onModuleDestroy(): void {
    this.shuttingDown = true;
  }

  /** Stops issuing and records the final lease (the last millisecond used). */
  async beforeApplicationShutdown(): Promise<void> {
    this.shuttingDown = true;
    this.closing = true;
    await this.worker?.stop();
  }

  /** Closes the worker-ID source (its ZooKeeper client). Never throws. */
  async onApplicationShutdown(): Promise<void> {
    if (!this.sourceOpen) return;
    this.sourceOpen = false;
    await this.source
      .close()
      .catch((error: unknown) =>
        this.logger.warn(`Closing the ${this.source.kind} source failed: ${String(error)}`),
      );
  }

  /**
   * The next ID. `key` is validated and otherwise ignored, as in Leaf: all keys share one
   * sequence.
   * @throws {InvalidArgumentError} for a malformed key.
   * @throws {ClockMovedBackwardsError} when the clock went back beyond the tolerance, or stayed back.
   * @throws {TimeLeaseUnavailableError} when the time lease cannot be extended (fail closed).
   * @throws {TimestampOverflowError} when the time no longer fits 41 bits.
   * @throws {ShuttingDownError} during shutdown.
   */
  get(key?: string): Promise<bigint> {
    try {
      const generator = this.requireGenerator();
      if (key !== undefined) assertValidKey(key);
      return generator.next();
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /**
   * The next ID, synchronously: succeeds while the current millisecond has sequence left
   * and is within the lease. Never waits. `key` as in {@link get}.
   * @throws {SnowflakeNotReadyError} when an ID would need a wait (nothing is consumed).
   * @throws {InvalidArgumentError} for a malformed key.
   */
  getSync(key?: string): bigint {
    const generator = this.requireGenerator();
    if (key !== undefined) assertValidKey(key);
    const id = generator.tryNext();
    if (id === undefined) {
      this.events?.notReady('snowflake', null);
      throw new SnowflakeNotReadyError();
    }
    return id;
  }

  /**
   * `count` increasing IDs (same argument order as {@link SegmentService.getIds}). Each
   * millisecond's share is made synchronously; the batch awaits between milliseconds, so it
   * never blocks the event loop for long. `key` is validated and otherwise ignored, as in
   * {@link get}.
   * @throws {InvalidArgumentError} unless `count` is an integer in 1..maxBatchSize, or for a malformed key.
   * @throws as {@link get}.
   */
  async getIds(key: string | undefined, count: number): Promise<bigint[]> {
    const generator = this.requireGenerator();
    if (key !== undefined) assertValidKey(key);
    assertValidCount(count, this.leafOptions.maxBatchSize);
    return generator.take(count);
  }

  /**
   * Splits an ID (bigint or decimal string) into timestamp, worker ID and sequence, using
   * the configured epoch.
   * @throws {InvalidArgumentError} for a non-decimal, negative or out-of-range ID.
   */
  decode(id: bigint | string): DecodedSnowflakeId {
    return this.layout.decode(id);
  }

  /**
   * Every worker ID of this namespace in ZooKeeper or in `leaf_worker_lease`: who holds it,
   * until when, whether it is held live (operators; docs/operations.md, "Worker IDs").
   * Empty when the worker ID comes from neither (embedded, ordinal without ZooKeeper).
   * @throws {ZkError} when ZooKeeper fails; the driver's error when the database does.
   */
  async workers(): Promise<SnowflakeWorkerInfo[]> {
    if (!this.sourceOpen) return [];
    return this.source.list(this.leafOptions.name, this.leafOptions.clock.now());
  }

  /** Where the worker ID comes from (an adapter of `WorkerIdSource`; internal). */
  get workerIdSource(): WorkerIdSource {
    return this.source;
  }

  /**
   * One heartbeat (used by {@link SnowflakeHeartbeatJob}): extends the lease.
   * @throws {TimeLeaseUnavailableError} when the extension failed.
   */
  heartbeat(): Promise<void> {
    return this.worker && !this.closing ? this.worker.heartbeat() : Promise.resolve();
  }

  /**
   * One renewal of the region's lease (used by {@link SnowflakeHeartbeatJob}); nothing
   * without `snowflake.region`.
   * @throws {RegionLeaseUnavailableError} when the renewal failed or found the lease lost.
   */
  renewRegion(): Promise<void> {
    return this.worker && !this.closing ? this.worker.renewRegion() : Promise.resolve();
  }

  /** Whether an ID can be issued now. Never throws. */
  readiness(): SnowflakeReadiness {
    if (this.closing || this.shuttingDown) return { ready: false, reason: 'shutting down' };
    if (!this.worker) return { ready: false, reason: 'not started' };
    return this.worker.readiness();
  }

  /** Monitoring view. Never throws. */
  status(): SnowflakeStatus {
    return {
      started: this.worker !== null,
      closing: this.closing,
      readiness: this.readiness(),
      worker: this.worker?.snapshot() ?? null,
    };
  }

  /** Hot path: one null check; the unusual cases are sorted out below. */
  private requireGenerator(): SnowflakeGenerator {
    const generator = this.generator;
    if (generator !== null && !this.closing) return generator;
    if (this.closing) throw new ShuttingDownError();
    throw new WorkerIdUnavailableError('The snowflake worker has not started');
  }
}
