import {
  Inject,
  Injectable,
  Logger,
  Optional,
  type BeforeApplicationShutdown,
  type OnModuleDestroy,
  type OnModuleInit,
} from '@nestjs/common';
import { TagNotFoundError } from '../../core/errors/tag-not-found.error';
import type { LeafAllocRow, LeafAllocStore } from '../../core/segment/leaf-alloc-store.port';
import type { HandBackResult } from '../../core/segment/range-loader';
import {
  SegmentCache,
  type IdRange,
  type SegmentCacheSnapshot,
} from '../../core/segment/segment-cache';
import type { HighWaterStatus, SegmentReadiness } from '../../core/segment/segment-readiness';
import { withTimeout } from '../../core/with-timeout';
import type { SegmentGenerator } from '../../core/segment/segment-generator';
import {
  LEAF_ALLOC_STORE,
  LEAF_RESOLVED_OPTIONS,
  LEAF_SEGMENT_HIGH_WATER,
} from '../leaf.constants';
import type { SegmentBufferSnapshot } from '../../core/segment/segment-buffer';
import type { ResolvedLeafOptions, ResolvedSegmentOptions } from '../leaf-options.interface';
import { modeOptions } from '../leaf-modes';
import { LeafEventRecorder } from '../metrics/leaf-event.recorder';
import { logHandBack, segmentLoadLog } from './allocation-log';
import { segmentBufferOptions } from './segment-options.resolver';
import { connectHighWater, type SegmentHighWater } from './segment-high-water';
import { messageOf } from '../../core/errors/leaf.error';

export type { HandBackResult, HighWaterStatus, IdRange, SegmentCacheSnapshot, SegmentReadiness };

/**
 * The monitoring view (`/cache`): the cache's, with the high-water mark's state and, per tag,
 * the mark as this instance last read or wrote it (a decimal string; `null` before its first
 * allocation with the mark, and always without it).
 */
export interface SegmentMonitorSnapshot extends SegmentCacheSnapshot {
  readonly highWater: HighWaterStatus;
  readonly buffers: Array<SegmentBufferSnapshot & { readonly highWater: string | null }>;
}

/** How long a graceful stop waits for the hand-back before leaving the rest to the gap. */
const HAND_BACK_TIMEOUT_MS = 5000;

/**
 * Leaf-segment: IDs from database ranges, served from a double buffer per key. The logic
 * is the framework-free {@link SegmentCache}; this service starts it (tag list, warm keys)
 * and drains it at shutdown.
 *
 * The tag list is loaded at start and refreshed by `TagRefreshJob`; a key's first range is
 * loaded on its first request, or at start for `warmTags`. An unreachable database does not
 * fail start-up: segment mode answers `LEAF_SEGMENT_NOT_INITIALIZED` until `TagRefreshJob`'s
 * retries (with back-off) read the tag list, then warms its tags and joins.
 *
 * `LeafModule` provides it only with segment mode on.
 */
@Injectable()
export class SegmentService implements OnModuleInit, OnModuleDestroy, BeforeApplicationShutdown {
  private readonly logger = new Logger(SegmentService.name);
  private readonly cache: SegmentCache;
  private readonly options: ResolvedSegmentOptions;
  /** The tag list could not be read at start: the next successful refresh joins. */
  private waiting = false;
  private shuttingDown = false;

  constructor(
    @Inject(LEAF_RESOLVED_OPTIONS) private readonly leafOptions: ResolvedLeafOptions,
    @Inject(LEAF_ALLOC_STORE) store: LeafAllocStore,
    @Optional() events?: LeafEventRecorder,
    @Optional()
    @Inject(LEAF_SEGMENT_HIGH_WATER)
    private readonly highWater: SegmentHighWater | null = null,
  ) {
    const options = modeOptions(leafOptions, 'segment');
    this.options = options;
    this.cache = new SegmentCache(
      store,
      {
        ...segmentBufferOptions(options),
        maxConcurrentLoads: options.maxConcurrentLoads,
        maxBatchSize: leafOptions.maxBatchSize,
        maxRangeCount: options.maxRangeCount,
        observer: events ?? null,
        journal: leafOptions.journal,
      },
      leafOptions.clock,
      segmentLoadLog(this.logger),
    );
  }

  /** True once the tag list has been read from the database at least once. */
  get initialized(): boolean {
    return this.cache.initialized;
  }

  /**
   * Loads the tag list, then warms the configured keys. An unreachable database does not fail
   * start-up (segment mode joins later, see the class); a warm tag missing from the table does.
   */
  async onModuleInit(): Promise<void> {
    await connectHighWater(this.highWater, this.leafOptions, this.logger);
    try {
      await this.cache.refreshTags();
    } catch (error) {
      this.waiting = true;
      this.logger.warn(
        `Segment mode not serving yet: the tag list cannot be read (${messageOf(error)}). ` +
          'Segment requests answer 503 LEAF_SEGMENT_NOT_INITIALIZED; retrying with back-off, ' +
          'no restart needed. Check that the database (LEAF_DB_URL) is reachable and has leaf_alloc.',
      );
      return;
    }
    this.logger.log(`Segment mode serving ${this.cache.tags().length} tag(s)`);
    await this.warm(true);
  }

  /** The high-water mark's state (`off` without `segment.highWater`). */
  highWaterStatus(): HighWaterStatus {
    const marks = this.highWater?.marks;
    if (!marks) return { state: 'off', store: null, root: null };
    return {
      state: marks.available === false ? 'unavailable' : 'on',
      store: marks.kind ?? null,
      root: marks.describe?.() ?? null,
    };
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
    await this.cache.close();
    try {
      await this.handBack();
    } finally {
      // Closes the mark's session; a DataSource is the application's.
      await this.highWater?.marks.close?.();
    }
  }

  private async handBack(): Promise<void> {
    if (!this.options.handBackOnClose) return;
    try {
      const outcome = await withTimeout(this.cache.handBack(), HAND_BACK_TIMEOUT_MS);
      if (!outcome.ok) {
        this.logger.warn(
          `Hand-back of unused IDs did not finish within ${HAND_BACK_TIMEOUT_MS} ms`,
        );
        return;
      }
      this.handBackResults = outcome.value;
      logHandBack(this.logger, outcome.value);
    } catch (error) {
      this.logger.warn(`Hand-back of unused IDs failed: ${messageOf(error)}`);
    }
  }

  /** The results of the last hand-back (empty before shutdown). */
  get lastHandBack(): readonly HandBackResult[] {
    return this.handBackResults;
  }

  private handBackResults: HandBackResult[] = [];

  /** Warms `warmTags`; at start a tag missing from the table fails start-up, else it is logged. */
  private async warm(atStart: boolean): Promise<void> {
    const tags = this.options.warmTags;
    if (tags.length === 0) return;
    try {
      await this.cache.warm(tags);
    } catch (error) {
      if (atStart && error instanceof TagNotFoundError) throw error;
      this.logger.warn(`Warming ${tags.join(', ')} failed: ${messageOf(error)}`);
    }
  }

  /**
   * Segment readiness: the tag list loaded, not shutting down, and no tag in use running out
   * of IDs in memory while allocations fail (`readinessRunwayMs`). Samples the issue rates.
   */
  readiness(): SegmentReadiness {
    const readiness = {
      ...this.cache.readiness(this.options.readinessRunwayMs),
      highWater: { ...this.highWaterStatus(), repairs: this.cache.highWaterRepairs() },
    };
    if (this.shuttingDown && readiness.ready) {
      return { ...readiness, ready: false, reason: 'shutting down' };
    }
    return readiness;
  }

  /** Samples each tag's issue rate (the periodic job; cheap, off the hot path). */
  sampleRates(): void {
    this.cache.sampleRates();
  }

  /**
   * The next ID of `key` (a `biz_tag`).
   * @throws {InvalidArgumentError} for a malformed key.
   * @throws {TagNotFoundError} when the tag is not in `leaf_alloc`.
   * @throws {SegmentNotReadyError} when no range arrived within `loadTimeoutMs`.
   * @throws {AllocationError} when the database failed.
   */
  get(key: string): Promise<bigint> {
    return this.cache.get(key);
  }

  /**
   * The next ID of `key`, synchronously: succeeds while the key's buffer is warm.
   * @throws {SegmentNotReadyError} when no range is in memory (a load has been started).
   * @throws as {@link get} otherwise.
   */
  getSync(key: string): bigint {
    return this.cache.getSync(key);
  }

  /**
   * A handle for one key that skips the key lookup on every call.
   * @throws {TagNotFoundError} when the tag is not in `leaf_alloc`.
   */
  generator(key: string): SegmentGenerator {
    return this.cache.generator(key);
  }

  /**
   * `count` IDs of `key`, increasing, consecutive within each range of this instance.
   * @throws {InvalidArgumentError} unless `count` is an integer in 1..maxBatchSize.
   * @throws as {@link get}.
   */
  getIds(key: string, count: number): Promise<bigint[]> {
    return this.cache.getIds(key, count);
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
    return this.cache.getRange(key, count, after);
  }

  /**
   * Reads the tag list: adds buffers for new tags, drops buffers of deleted ones. Call it
   * after creating a tag by hand to serve it at once instead of at the next refresh.
   * @throws {AllocationError} when the database cannot be read (the old list stays).
   */
  async refreshTags(): Promise<void> {
    const result = await this.cache.refreshTags();
    if (!result.first) return;
    this.logger.log(
      this.waiting
        ? `Segment mode joined: the database answered, serving ${result.total} tag(s)`
        : `Segment mode serving ${result.total} tag(s)`,
    );
    if (this.waiting) {
      this.waiting = false;
      await this.warm(false);
    }
  }

  /** Tags currently known. */
  tags(): string[] {
    return this.cache.tags();
  }

  /** Monitoring view of every buffer (Leaf's `/cache`), with the high-water marks. */
  snapshot(): SegmentMonitorSnapshot {
    const cache = this.cache.snapshot();
    const marks = this.highWater;
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
    return this.cache.listAllocations();
  }

  /**
   * Serves `tag` at once after its row was created through this process
   * (`SegmentAdminService`); other instances find it on its first request.
   */
  tagCreated(tag: string): void {
    this.cache.tagCreated(tag);
  }
}
