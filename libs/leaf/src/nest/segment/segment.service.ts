import {
  Inject,
  Injectable,
  Logger,
  type BeforeApplicationShutdown,
  type OnModuleInit,
} from '@nestjs/common';
import type { LeafAllocRow, LeafAllocStore } from '../../core/segment/leaf-alloc-store.port';
import {
  SegmentCache,
  type IdRange,
  type SegmentCacheSnapshot,
} from '../../core/segment/segment-cache';
import type { SegmentGenerator } from '../../core/segment/segment-generator';
import { LEAF_ALLOC_STORE, LEAF_RESOLVED_OPTIONS } from '../leaf.constants';
import type { ResolvedLeafOptions } from '../leaf-options.interface';

export type { IdRange, SegmentCacheSnapshot };

/**
 * Leaf-segment: IDs from database ranges, served from a double buffer per key. The logic
 * is the framework-free {@link SegmentCache}; this service starts it (tag list, warm keys)
 * and drains it at shutdown.
 *
 * The tag list is loaded at start and refreshed by `TagRefreshJob`; a key's first range is
 * loaded on its first request, or at start for `warmTags`.
 */
@Injectable()
export class SegmentService implements OnModuleInit, BeforeApplicationShutdown {
  private readonly logger = new Logger(SegmentService.name);
  private readonly cache: SegmentCache;

  constructor(
    @Inject(LEAF_RESOLVED_OPTIONS) private readonly leafOptions: ResolvedLeafOptions,
    @Inject(LEAF_ALLOC_STORE) store: LeafAllocStore | null,
  ) {
    const options = leafOptions.segment;
    // With segment mode off the cache has no store: every call is ModeDisabledError.
    const loadTimeoutMs = options?.loadTimeoutMs ?? 0;
    this.cache = new SegmentCache(
      options ? store : null,
      {
        preloadThreshold: options?.preloadThreshold ?? 0.9,
        loadTimeoutMs,
        stepDurationMs: options?.stepDurationMs ?? 0,
        maxStep: options?.maxStep ?? 1,
        retryBackoffMs: Math.min(1000, loadTimeoutMs || 1000),
        maxConcurrentLoads: options?.maxConcurrentLoads ?? 1,
        maxBatchSize: leafOptions.maxBatchSize,
      },
      leafOptions.clock,
    );
  }

  /** True when segment mode is enabled in this module. */
  get enabled(): boolean {
    return this.leafOptions.segment !== null;
  }

  /** True once the tag list has been read from the database at least once. */
  get initialized(): boolean {
    return this.cache.initialized;
  }

  /** Loads the tag list, then warms the configured keys. A failure here fails start-up. */
  async onModuleInit(): Promise<void> {
    const options = this.leafOptions.segment;
    if (!options) return;
    await this.refreshTags();
    await this.cache.warm(options.warmTags);
  }

  /** Stops issuing and waits for loads in flight, so no transaction outlives the app. */
  beforeApplicationShutdown(): Promise<void> {
    return this.cache.close();
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
   * A contiguous range of `count` IDs `[start, end)`, owned by the caller: cut from the
   * current segment when it has room, otherwise allocated directly from the database.
   * @throws {InvalidArgumentError} unless `count` is an integer in 1..maxBatchSize.
   * @throws as {@link get}.
   */
  getRange(key: string, count: number): Promise<IdRange> {
    return this.cache.getRange(key, count);
  }

  /**
   * Reads the tag list: adds buffers for new tags, drops buffers of deleted ones. Call it
   * after creating a tag by hand to serve it at once instead of at the next refresh.
   * @throws {ModeDisabledError} when segment mode is off.
   * @throws {AllocationError} when the database cannot be read (the old list stays).
   */
  async refreshTags(): Promise<void> {
    const result = await this.cache.refreshTags();
    if (result.first) this.logger.log(`Segment mode serving ${result.total} tag(s)`);
  }

  /** Tags currently known. */
  tags(): string[] {
    return this.cache.tags();
  }

  /** Monitoring view of every buffer (Leaf's `/cache`). */
  snapshot(): SegmentCacheSnapshot {
    return this.cache.snapshot();
  }

  /** Every `leaf_alloc` row (Leaf's `/db`). */
  listAllocations(): Promise<LeafAllocRow[]> {
    return this.cache.listAllocations();
  }
}
