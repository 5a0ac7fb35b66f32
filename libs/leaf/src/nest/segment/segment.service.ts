import {
  Inject,
  Injectable,
  Logger,
  type BeforeApplicationShutdown,
  type OnModuleInit,
} from '@nestjs/common';
import { assertValidCount, assertValidKey } from '../../core/arguments';
import { ConcurrencyLimiter } from '../../core/concurrency-limiter';
import { ModeDisabledError } from '../../core/errors/mode-disabled.error';
import { SegmentNotInitializedError } from '../../core/errors/segment-not-initialized.error';
import { ShuttingDownError } from '../../core/errors/shutting-down.error';
import { TagNotFoundError } from '../../core/errors/tag-not-found.error';
import { LEAF_ALLOC_STORE, LEAF_RESOLVED_OPTIONS } from '../leaf.constants';
import type { ResolvedLeafOptions, ResolvedSegmentOptions } from '../leaf-options.interface';
import type {
  AllocatedRange,
  LeafAllocRow,
  LeafAllocStore,
} from '../../core/segment/leaf-alloc-store.port';
import {
  SegmentBuffer,
  type SegmentBufferOptions,
  type SegmentBufferSnapshot,
} from '../../core/segment/segment-buffer';
import { SegmentGenerator } from '../../core/segment/segment-generator';

/** A contiguous half-open range `[start, end)` of IDs now owned by the caller. */
export interface IdRange {
  readonly start: bigint;
  readonly end: bigint;
}

/** Monitoring view of segment mode. */
export interface SegmentCacheSnapshot {
  readonly initialized: boolean;
  readonly lastRefreshAt: number | null;
  readonly buffers: SegmentBufferSnapshot[];
}

/**
 * Leaf-segment: IDs from database ranges, served from a double buffer per tag.
 *
 * The tag list is loaded at start and refreshed by {@link TagRefreshJob}; a tag's first
 * range is loaded on its first request, or at start for `warmTags`.
 */
@Injectable()
export class SegmentService implements OnModuleInit, BeforeApplicationShutdown {
  private readonly logger = new Logger(SegmentService.name);
  private readonly buffers = new Map<string, SegmentBuffer>();
  /**
   * The hot path's view of `buffers`: a plain object keyed by tag, rebuilt whenever the tag
   * set changes. V8 serves a property load on a small fast-mode object from its inline cache,
   * about twice as fast as `Map.get`; properties are defined (never assigned, so a tag named
   * `__proto__` is just a key) and lookups that hit `Object.prototype` are filtered by
   * `instanceof`. Emptied when closing, so the hot path needs no other check.
   */
  private index: Record<string, unknown> = {};
  private readonly options: ResolvedSegmentOptions | null;
  private readonly bufferOptions: SegmentBufferOptions | null;
  private readonly limiter: ConcurrencyLimiter;
  private readonly loader: (tag: string, step: number | undefined) => Promise<AllocatedRange>;
  private lastRefreshAt: number | null = null;
  private closing = false;
  /** Direct allocations of `getRange` in flight, for shutdown to await. */
  private readonly directLoads = new Set<Promise<unknown>>();

  constructor(
    @Inject(LEAF_RESOLVED_OPTIONS) private readonly leafOptions: ResolvedLeafOptions,
    @Inject(LEAF_ALLOC_STORE) private readonly store: LeafAllocStore | null,
  ) {
    this.options = leafOptions.segment;
    this.limiter = new ConcurrencyLimiter(this.options?.maxConcurrentLoads ?? 1);
    this.bufferOptions = this.options && {
      preloadThreshold: this.options.preloadThreshold,
      loadTimeoutMs: this.options.loadTimeoutMs,
      stepDurationMs: this.options.stepDurationMs,
      maxStep: this.options.maxStep,
      retryBackoffMs: Math.min(1000, this.options.loadTimeoutMs || 1000),
    };
    this.loader = (tag, step) => this.limiter.run(() => this.requireStore().allocate(tag, step));
  }

  /** True when segment mode is enabled in this module. */
  get enabled(): boolean {
    return this.options !== null;
  }

  /** True once the tag list has been read from the database at least once. */
  get initialized(): boolean {
    return this.lastRefreshAt !== null;
  }

  /** Loads the tag list, then warms the configured tags. A failure here fails start-up. */
  async onModuleInit(): Promise<void> {
    if (!this.options) return;
    await this.refreshTags();
    await Promise.all(
      this.options.warmTags.map(async (tag) => {
        const buffer = this.buffers.get(tag);
        if (!buffer) throw new TagNotFoundError(tag);
        await buffer.warm();
      }),
    );
  }

  /** Stops issuing and waits for loads in flight, so no transaction outlives the app. */
  async beforeApplicationShutdown(): Promise<void> {
    this.closing = true;
    this.index = {};
    const settle = (load: Promise<unknown> | null) => load?.catch(() => undefined);
    await Promise.all([
      ...[...this.buffers.values()].map((buffer) => settle(buffer.pendingLoad)),
      ...[...this.directLoads].map(settle),
    ]);
  }

  /**
   * The next ID of `tag`.
   * @throws {InvalidArgumentError} for a malformed key.
   * @throws {TagNotFoundError} when the tag is not in `leaf_alloc`.
   * @throws {SegmentNotReadyError} when no range arrived within `loadTimeoutMs`.
   * @throws {AllocationError} when the database failed.
   */
  get(tag: string): Promise<bigint> {
    try {
      return this.buffer(tag).nextAsync();
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /**
   * The next ID of `tag`, synchronously: succeeds while the tag's buffer is warm.
   * @throws {SegmentNotReadyError} when no range is in memory (a load has been started).
   * @throws as {@link get} otherwise.
   */
  getSync(tag: string): bigint {
    return this.buffer(tag).nextSync();
  }

  /**
   * A handle for one tag that skips the key lookup on every call.
   * @throws {TagNotFoundError} when the tag is not in `leaf_alloc`.
   */
  generator(tag: string): SegmentGenerator {
    return new SegmentGenerator(this.buffer(tag));
  }

  /**
   * `count` IDs of `tag`, increasing, consecutive within each range of this instance.
   * @throws {InvalidArgumentError} unless `count` is an integer in 1..maxBatchSize.
   * @throws as {@link get}.
   */
  async getIds(tag: string, count: number): Promise<bigint[]> {
    const buffer = this.buffer(tag);
    assertValidCount(count, this.leafOptions.maxBatchSize);
    return buffer.take(count);
  }

  /**
   * A contiguous range of `count` IDs `[start, end)`, owned by the caller: cut from the
   * current segment when it has room, otherwise allocated directly from the database.
   * @throws {InvalidArgumentError} unless `count` is an integer in 1..maxBatchSize.
   * @throws as {@link get}.
   */
  async getRange(tag: string, count: number): Promise<IdRange> {
    const buffer = this.buffer(tag);
    assertValidCount(count, this.leafOptions.maxBatchSize);
    const slice = buffer.trySlice(count);
    if (slice) return slice;
    const load = this.loader(tag, count);
    this.directLoads.add(load);
    try {
      const range = await load;
      return { start: range.maxId - BigInt(range.appliedStep), end: range.maxId };
    } finally {
      this.directLoads.delete(load);
    }
  }

  /**
   * Reads the tag list: adds buffers for new tags, drops buffers of deleted ones.
   * @throws {AllocationError} when the database cannot be read (the old list stays).
   */
  async refreshTags(): Promise<void> {
    const tags = new Set(await this.requireStore().listTags());
    const options = this.bufferOptions!;
    let changed = false;
    for (const tag of tags) {
      if (!this.buffers.has(tag)) {
        this.buffers.set(tag, new SegmentBuffer(tag, this.loader, options, this.leafOptions.clock));
        changed = true;
      }
    }
    for (const [tag, buffer] of this.buffers) {
      if (!tags.has(tag)) {
        buffer.dispose();
        this.buffers.delete(tag);
        changed = true;
      }
    }
    if (changed) this.rebuildIndex();
    if (this.lastRefreshAt === null) this.logger.log(`Segment mode serving ${tags.size} tag(s)`);
    this.lastRefreshAt = this.leafOptions.clock.now();
  }

  /** Tags currently known. */
  tags(): string[] {
    return [...this.buffers.keys()];
  }

  /** Monitoring view of every buffer (Leaf's `/cache`). */
  snapshot(): SegmentCacheSnapshot {
    return {
      initialized: this.initialized,
      lastRefreshAt: this.lastRefreshAt,
      buffers: [...this.buffers.values()].map((buffer) => buffer.snapshot()),
    };
  }

  /** Every `leaf_alloc` row (Leaf's `/db`). */
  listAllocations(): Promise<LeafAllocRow[]> {
    return this.requireStore().listAll();
  }

  /** Hot path: one property load. Everything unusual is sorted out in {@link missingBuffer}. */
  private buffer(tag: string): SegmentBuffer {
    const buffer = this.index[tag];
    if (buffer instanceof SegmentBuffer) return buffer;
    return this.missingBuffer(tag);
  }

  private rebuildIndex(): void {
    const index: Record<string, unknown> = {};
    for (const [tag, buffer] of this.buffers) {
      Object.defineProperty(index, tag, {
        value: buffer,
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    this.index = this.closing ? {} : index;
  }

  private missingBuffer(tag: string): never {
    if (!this.options) throw new ModeDisabledError('segment');
    assertValidKey(tag);
    if (this.closing) throw new ShuttingDownError();
    if (this.lastRefreshAt === null) throw new SegmentNotInitializedError();
    throw new TagNotFoundError(tag);
  }

  private requireStore(): LeafAllocStore {
    if (!this.store) throw new ModeDisabledError('segment');
    return this.store;
  }
}
