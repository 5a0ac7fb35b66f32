import {
  Inject,
  Injectable,
  Logger,
  Optional,
  type BeforeApplicationShutdown,
  type OnModuleDestroy,
  type OnModuleInit,
} from '@nestjs/common';
import { ModeDisabledError } from '../../core/errors/mode-disabled.error';
import { TagNotFoundError } from '../../core/errors/tag-not-found.error';
import type { LeafAllocRow, LeafAllocStore } from '../../core/segment/leaf-alloc-store.port';
import type { HandBackResult } from '../../core/segment/range-loader';
import {
  SegmentCache,
  type IdRange,
  type SegmentCacheSnapshot,
} from '../../core/segment/segment-cache';
import type { SegmentReadiness } from '../../core/segment/segment-readiness';
import { withTimeout } from '../../core/with-timeout';
import type { SegmentGenerator } from '../../core/segment/segment-generator';
import {
  LEAF_ALLOC_STORE,
  LEAF_RESOLVED_OPTIONS,
  LEAF_SEGMENT_HIGH_WATER,
} from '../leaf.constants';
import type { RecordingHighWaterStore } from '../../core/segment/recording-high-water.store';
import type { SegmentBufferSnapshot } from '../../core/segment/segment-buffer';
import type { ZkClient } from '../../core/zookeeper/zk-client.port';
import type { ResolvedLeafOptions } from '../leaf-options.interface';
import { LeafEventRecorder } from '../metrics/leaf-event.recorder';
import { logRangeRefused, logRangeRepaired } from './allocation-log';

export type { HandBackResult, IdRange, SegmentCacheSnapshot, SegmentReadiness };

/** The segment high-water mark as the module wires it (internal). */
export interface SegmentHighWater {
  readonly zk: ZkClient;
  readonly store: RecordingHighWaterStore;
  /** The parent znode of the marks. */
  readonly root: string;
}

/** State of the high-water mark, as readiness reports it. */
export interface HighWaterStatus {
  /** `off`: not configured (segment-only protection); `on`: connected; `unavailable`: configured, ZooKeeper not connected (allocations refused, IDs in memory still served). */
  readonly state: 'off' | 'on' | 'unavailable';
  /** The parent znode of the marks, when on. */
  readonly root: string | null;
}

/**
 * The monitoring view (`/cache`): the cache's, with the high-water mark's state and, per tag,
 * the mark as this instance last read or wrote it (a decimal string; `null` before its first
 * allocation with the mark, and always without it).
 */
export interface SegmentMonitorSnapshot extends SegmentCacheSnapshot {
  readonly highWater: HighWaterStatus;
  readonly buffers: Array<SegmentBufferSnapshot & { readonly highWater: string | null }>;
}

/** How long start-up waits for the high-water mark's ZooKeeper before going on without it. */
const HIGH_WATER_CONNECT_TIMEOUT_MS = 5000;

/** Readiness of a segment mode that is off. */
const DISABLED_READINESS: SegmentReadiness = {
  ready: false,
  reason: 'segment mode is off',
  allocationFailing: false,
  lastAllocationError: null,
  tags: [],
};

/** What the asynchronous calls of a segment mode that is off answer. */
function disabled(): Promise<never> {
  return Promise.reject(new ModeDisabledError('segment'));
}

/** How long a graceful stop waits for the hand-back before leaving the rest to the gap. */
const HAND_BACK_TIMEOUT_MS = 5000;

function reason(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * Leaf-segment: IDs from database ranges, served from a double buffer per key. The logic
 * is the framework-free {@link SegmentCache}; this service starts it (tag list, warm keys)
 * and drains it at shutdown.
 *
 * The tag list is loaded at start and refreshed by `TagRefreshJob`; a key's first range is
 * loaded on its first request, or at start for `warmTags`. An unreachable database does not
 * fail start-up: segment mode answers `LEAF_SEGMENT_NOT_INITIALIZED` until `TagRefreshJob`'s
 * retries (with back-off) read the tag list, then warms its tags and joins.
 */
@Injectable()
export class SegmentService implements OnModuleInit, OnModuleDestroy, BeforeApplicationShutdown {
  private readonly logger = new Logger(SegmentService.name);
  private readonly cache: SegmentCache | null;
  /** The tag list could not be read at start: the next successful refresh joins. */
  private waiting = false;
  private shuttingDown = false;

  constructor(
    @Inject(LEAF_RESOLVED_OPTIONS) private readonly leafOptions: ResolvedLeafOptions,
    @Inject(LEAF_ALLOC_STORE) store: LeafAllocStore | null,
    @Optional() events?: LeafEventRecorder,
    @Optional()
    @Inject(LEAF_SEGMENT_HIGH_WATER)
    private readonly highWater: SegmentHighWater | null = null,
  ) {
    const options = leafOptions.segment;
    // With segment mode off there is no cache: every call is ModeDisabledError.
    this.cache =
      options && store
        ? new SegmentCache(
            store,
            {
              preloadThreshold: options.preloadThreshold,
              loadTimeoutMs: options.loadTimeoutMs,
              stepDurationMs: options.stepDurationMs,
              maxStep: options.maxStep,
              retryBackoffMs: Math.min(1000, options.loadTimeoutMs || 1000),
              maxConcurrentLoads: options.maxConcurrentLoads,
              maxBatchSize: leafOptions.maxBatchSize,
              maxRangeCount: options.maxRangeCount,
              observer: events ?? null,
            },
            leafOptions.clock,
            {
              // Once per tag per failure streak, not per request.
              loadFailed: (tag, error) =>
                this.logger.warn(
                  `Allocation for tag "${tag}" failing: ${reason(error)}. Serving what is in memory; ` +
                    'readiness turns down before it runs out. Check the database (LEAF_DB_URL) and the row lock.',
                ),
              loadRecovered: (tag, failures) =>
                this.logger.log(
                  `Allocation for tag "${tag}" recovered after ${failures} failed attempt(s)`,
                ),
              rangeRepaired: (range) => logRangeRepaired(this.logger, range),
              rangeRefused: (error) => logRangeRefused(this.logger, error),
            },
          )
        : null;
  }

  /** The cache of an enabled segment mode. @throws {ModeDisabledError} when it is off. */
  private get on(): SegmentCache {
    if (this.cache === null) throw new ModeDisabledError('segment');
    return this.cache;
  }

  /** True when segment mode is enabled in this module. */
  get enabled(): boolean {
    return this.leafOptions.segment !== null;
  }

  /** True once the tag list has been read from the database at least once. */
  get initialized(): boolean {
    return this.cache !== null && this.cache.initialized;
  }

  /**
   * Loads the tag list, then warms the configured keys. An unreachable database does not fail
   * start-up (segment mode joins later, see the class); a warm tag missing from the table does.
   */
  async onModuleInit(): Promise<void> {
    const cache = this.cache;
    if (!cache) return;
    await this.connectHighWater();
    try {
      await cache.refreshTags();
    } catch (error) {
      this.waiting = true;
      this.logger.warn(
        `Segment mode not serving yet: the tag list cannot be read (${reason(error)}). ` +
          'Segment requests answer 503 LEAF_SEGMENT_NOT_INITIALIZED; retrying with back-off, ' +
          'no restart needed. Check that the database (LEAF_DB_URL) is reachable and has leaf_alloc.',
      );
      return;
    }
    this.logger.log(`Segment mode serving ${cache.tags().length} tag(s)`);
    await this.warm(cache, true);
  }

  /**
   * Opens the high-water mark's session. Start-up does not fail without it: allocations are
   * refused (`LEAF_HIGH_WATER_UNAVAILABLE`) until it connects, readiness says so.
   */
  private async connectHighWater(): Promise<void> {
    const highWater = this.highWater;
    const allocation = this.leafOptions.segment?.allocation;
    const shared =
      allocation?.kind === 'dataSource' &&
      ['mysql', 'mariadb'].includes(allocation.dataSource.options.type);
    if (!highWater) {
      // A shared database is where instances share tags and backups get restored; SQLite and
      // custom stores are left alone.
      if (!shared) return;
      const modes = this.leafOptions.sequence ? 'Segment and sequence mode' : 'Segment mode';
      const sequence = this.leafOptions.sequence
        ? ' (in sequence mode, by the issuer until its group moves to another instance)'
        : '';
      this.logger.warn(
        `${modes} without a high-water mark (segment.highWater / LEAF_SEGMENT_HIGH_WATER_ZK): ` +
          `a lowered or restored max_id is caught only by the instance holding the IDs above it${sequence}. ` +
          'Never lower max_id or restore leaf_alloc from a backup (docs/operations.md).',
      );
      return;
    }
    try {
      await highWater.zk.connect(HIGH_WATER_CONNECT_TIMEOUT_MS);
      this.logger.log(`Segment high-water mark on ZooKeeper (${highWater.root})`);
    } catch (error) {
      this.logger.warn(
        `The high-water mark's ZooKeeper is not reachable (${reason(error)}): allocations answer ` +
          'LEAF_HIGH_WATER_UNAVAILABLE until it is; IDs in memory are still served.',
      );
    }
  }

  /** The high-water mark's state (`off` without `segment.highWater`). */
  highWaterStatus(): HighWaterStatus {
    const highWater = this.highWater;
    if (!highWater) return { state: 'off', root: null };
    return { state: highWater.zk.connected ? 'on' : 'unavailable', root: highWater.root };
  }

  /** Readiness reports "shutting down" from the first shutdown hook on. */
  onModuleDestroy(): void {
    this.shuttingDown = true;
  }

  /**
   * Stops issuing and waits for loads in flight, so no transaction outlives the app; then
   * hands back each tag's unused IDs (`handBackOnClose`), bounded in time.
   */
  async beforeApplicationShutdown(): Promise<void> {
    this.shuttingDown = true;
    const cache = this.cache;
    if (!cache) return;
    await cache.close();
    try {
      await this.handBack(cache);
    } finally {
      await this.highWater?.zk.close();
    }
  }

  private async handBack(cache: SegmentCache): Promise<void> {
    if (!this.leafOptions.segment?.handBackOnClose) return;
    try {
      const outcome = await withTimeout(cache.handBack(), HAND_BACK_TIMEOUT_MS);
      if (!outcome.ok) {
        this.logger.warn(
          `Hand-back of unused IDs did not finish within ${HAND_BACK_TIMEOUT_MS} ms`,
        );
        return;
      }
      this.logHandBack(outcome.value);
    } catch (error) {
      this.logger.warn(`Hand-back of unused IDs failed: ${reason(error)}`);
    }
  }

  /** The results of the last hand-back (empty before shutdown). */
  get lastHandBack(): readonly HandBackResult[] {
    return this.handBackResults;
  }

  private handBackResults: HandBackResult[] = [];

  private logHandBack(results: HandBackResult[]): void {
    this.handBackResults = results;
    const done = results.filter((r) => r.handedBack);
    const ids = done.reduce((sum, r) => sum + (r.maxId - r.firstUnused), 0n);
    const failed = results.filter((r) => r.error !== undefined);
    const refused = results.length - done.length - failed.length;
    if (results.length === 0) return;
    this.logger.log(
      `Handed back ${ids} unused ID(s) of ${done.length} tag(s)` +
        (refused > 0
          ? `; ${refused} tag(s) kept their gap (another instance allocated since)`
          : '') +
        (failed.length > 0
          ? `; ${failed.length} failed (${failed.map((r) => `${r.tag}: ${reason(r.error)}`).join(', ')})`
          : ''),
    );
  }

  /** Warms `warmTags`; at start a tag missing from the table fails start-up, else it is logged. */
  private async warm(cache: SegmentCache, atStart: boolean): Promise<void> {
    const tags = this.leafOptions.segment?.warmTags;
    if (!tags) return;
    try {
      await cache.warm(tags);
    } catch (error) {
      if (atStart && error instanceof TagNotFoundError) throw error;
      this.logger.warn(`Warming ${tags.join(', ')} failed: ${reason(error)}`);
    }
  }

  /**
   * Segment readiness: the tag list loaded, not shutting down, and no tag in use running out
   * of IDs in memory while allocations fail (`readinessRunwayMs`). Samples the issue rates.
   */
  readiness(): SegmentReadiness {
    const options = this.leafOptions.segment;
    if (!this.cache || !options) return DISABLED_READINESS;
    const readiness = {
      ...this.cache.readiness(options.readinessRunwayMs),
      highWater: { ...this.highWaterStatus(), repairs: this.cache.highWaterRepairs() },
    };
    if (this.shuttingDown && readiness.ready) {
      return { ...readiness, ready: false, reason: 'shutting down' };
    }
    return readiness;
  }

  /** Samples each tag's issue rate (the periodic job; cheap, off the hot path). */
  sampleRates(): void {
    this.cache?.sampleRates();
  }

  /**
   * The next ID of `key` (a `biz_tag`).
   * @throws {ModeDisabledError} when segment mode is off.
   * @throws {InvalidArgumentError} for a malformed key.
   * @throws {TagNotFoundError} when the tag is not in `leaf_alloc`.
   * @throws {SegmentNotReadyError} when no range arrived within `loadTimeoutMs`.
   * @throws {AllocationError} when the database failed.
   */
  get(key: string): Promise<bigint> {
    return this.cache ? this.cache.get(key) : disabled();
  }

  /**
   * The next ID of `key`, synchronously: succeeds while the key's buffer is warm.
   * @throws {SegmentNotReadyError} when no range is in memory (a load has been started).
   * @throws as {@link get} otherwise.
   */
  getSync(key: string): bigint {
    return this.on.getSync(key);
  }

  /**
   * A handle for one key that skips the key lookup on every call.
   * @throws {TagNotFoundError} when the tag is not in `leaf_alloc`.
   */
  generator(key: string): SegmentGenerator {
    return this.on.generator(key);
  }

  /**
   * `count` IDs of `key`, increasing, consecutive within each range of this instance.
   * @throws {InvalidArgumentError} unless `count` is an integer in 1..maxBatchSize.
   * @throws as {@link get}.
   */
  getIds(key: string, count: number): Promise<bigint[]> {
    return this.cache ? this.cache.getIds(key, count) : disabled();
  }

  /**
   * A contiguous range of `count` IDs `[start, end)`, owned by the caller, above every ID and
   * range this instance handed out for `key` before and below every later one
   * (docs/design.md, "Ordering"): cut from the key's segments when they have room, otherwise
   * from a fresh allocation of `max(step, count)` whose rest serves later calls (the IDs
   * still buffered are then a gap). With `after`, the range starts at `after` or above.
   * @throws {InvalidArgumentError} unless `count` is an integer in 1..maxRangeCount.
   * @throws as {@link get}.
   */
  getRange(key: string, count: number, after?: bigint): Promise<IdRange> {
    return this.cache ? this.cache.getRange(key, count, after) : disabled();
  }

  /**
   * Reads the tag list: adds buffers for new tags, drops buffers of deleted ones. Call it
   * after creating a tag by hand to serve it at once instead of at the next refresh.
   * @throws {ModeDisabledError} when segment mode is off.
   * @throws {AllocationError} when the database cannot be read (the old list stays).
   */
  async refreshTags(): Promise<void> {
    const cache = this.on;
    const result = await cache.refreshTags();
    if (result.first) {
      this.logger.log(
        this.waiting
          ? `Segment mode joined: the database answered, serving ${result.total} tag(s)`
          : `Segment mode serving ${result.total} tag(s)`,
      );
    }
    if (result.first && this.waiting) {
      this.waiting = false;
      await this.warm(cache, false);
    }
  }

  /** Tags currently known. */
  tags(): string[] {
    return this.cache?.tags() ?? [];
  }

  /** Monitoring view of every buffer (Leaf's `/cache`), with the high-water marks. */
  snapshot(): SegmentMonitorSnapshot {
    const cache = this.cache?.snapshot() ?? {
      initialized: false,
      lastRefreshAt: null,
      buffers: [],
    };
    const marks = this.highWater?.store;
    return {
      ...cache,
      highWater: this.highWaterStatus(),
      buffers: cache.buffers.map((buffer) => ({
        ...buffer,
        highWater: marks?.lastSeen(buffer.tag)?.toString() ?? null,
      })),
    };
  }

  /** Every `leaf_alloc` row (Leaf's `/db`). */
  listAllocations(): Promise<LeafAllocRow[]> {
    return this.cache ? this.cache.listAllocations() : disabled();
  }

  /**
   * Serves `tag` at once after its row was created through this process
   * (`SegmentAdminService`); other instances find it on its first request.
   */
  tagCreated(tag: string): void {
    this.cache?.tagCreated(tag);
  }
}
