import { assertValidCount } from '../arguments';
import type { Clock } from '../clock';
import { InvalidArgumentError } from '../errors/invalid-argument.error';
import { ModeDisabledError } from '../errors/mode-disabled.error';
import { SegmentNotReadyError } from '../errors/segment-not-ready.error';
import { TagNotFoundError } from '../errors/tag-not-found.error';
import type { LeafAllocRow, LeafAllocStore } from './leaf-alloc-store.port';
import { MultiAllocStore, type AllocSourceStatus } from './multi-alloc.store';
import { RangeLoader, type HandBackResult, type TagRepair } from './range-loader';
import { RunwaySampler, type TagRunway } from './runway-sampler';
import {
  afterTooHigh,
  SegmentBuffer,
  STRIDED_RANGE,
  type SegmentBufferSnapshot,
  type SegmentLoadListener,
} from './segment-buffer';
import type { SegmentCacheOptions } from './segment-cache.options';
import { SegmentGenerator } from './segment-generator';
import { segmentReadiness, type SegmentReadiness } from './segment-readiness';
import { TagDiscovery } from './tag-discovery';

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
  /** Each database, when several serve the tags ({@link MultiAllocStore}). */
  readonly databases?: AllocSourceStatus[];
}

/** What changed in one {@link SegmentCache.refreshTags}. */
export interface TagRefreshResult {
  readonly added: readonly string[];
  readonly removed: readonly string[];
  readonly total: number;
  /** True on the first successful refresh. */
  readonly first: boolean;
}

/**
 * Leaf-segment as plain TypeScript: one double buffer per key, over a
 * {@link LeafAllocStore} port (docs/design.md, "Layers"). The Nest `SegmentService` only
 * starts and stops it.
 *
 * - The key set follows the table: {@link refreshTags} adds buffers for new tags and drops
 *   those of deleted ones; an unknown key is looked up ({@link TagDiscovery}) and is
 *   `TagNotFoundError`, never a new row.
 * - Range loads of all keys share one concurrency limit ({@link RangeLoader}); each buffer
 *   keeps one load in flight.
 * - {@link close} stops issuing at once and waits for every load in flight (the range
 *   allocations of {@link getRange} are loads of their buffer), so no transaction outlives
 *   the cache.
 * - Every range passes a `RangeGuard` before anyone sees it: a range not above what
 *   this instance holds (`max_id` went back) fails the load with
 *   `AllocationRegressedError` and is never served.
 *
 * With `store` null (segment mode off) every call fails with `ModeDisabledError`.
 */
export class SegmentCache {
  private readonly buffers = new Map<string, SegmentBuffer>();
  /**
   * The hot path's view of `buffers`: a plain object keyed by tag, rebuilt whenever the tag
   * set changes. V8 serves a property load on a small fast-mode object from its inline cache,
   * about twice as fast as `Map.get`; properties are defined (never assigned, so a tag named
   * `__proto__` is just a key) and lookups that hit `Object.prototype` are filtered by
   * `instanceof`. Emptied when closing, so the hot path needs no other check.
   */
  private index: Record<string, unknown> = {};
  private readonly loader: RangeLoader;
  private readonly discovery: TagDiscovery;
  private readonly sampler = new RunwaySampler();
  private lastRefreshAt: number | null = null;
  /** Bumped at the start of every {@link refreshTags}. */
  private refreshEpoch = 0;
  /** Tags added by a look-up, with the refresh epoch they were added in. */
  private readonly discovered = new Map<string, number>();
  private closing = false;
  private handedBack = false;

  constructor(
    private readonly store: LeafAllocStore | null,
    private readonly options: SegmentCacheOptions,
    private readonly clock: Clock,
    private readonly listener: SegmentLoadListener | null = null,
  ) {
    this.loader = new RangeLoader(store, options, clock, listener);
    this.discovery = new TagDiscovery(
      {
        store,
        isClosing: () => this.closing,
        isInitialized: () => this.initialized,
        existing: (key) => this.buffers.get(key),
        add: (key) => this.addBuffer(key),
      },
      options,
      clock,
    );
  }

  /** True once the tag list has been read at least once. */
  get initialized(): boolean {
    return this.lastRefreshAt !== null;
  }

  /**
   * The next ID of `key`.
   * @throws {InvalidArgumentError} for a malformed key.
   * @throws {TagNotFoundError} when the tag is not in the table.
   * @throws {SegmentNotReadyError} when no range arrived within `loadTimeoutMs`.
   * @throws {AllocationError} when the database failed.
   */
  get(key: string): Promise<bigint> {
    try {
      const buffer = this.index[key];
      if (buffer instanceof SegmentBuffer) return buffer.nextAsync();
      return this.discovery.discover(key).then((found) => found.nextAsync());
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /**
   * The next ID of `key`, synchronously: succeeds while the key's buffer is warm.
   * @throws {SegmentNotReadyError} when no range is in memory (a load has been started).
   * @throws as {@link get} otherwise.
   */
  getSync(key: string): bigint {
    return this.buffer(key).nextSync();
  }

  /**
   * A handle for one key that skips the key lookup on every call.
   * @throws {TagNotFoundError} when the tag is not in the table.
   */
  generator(key: string): SegmentGenerator {
    return new SegmentGenerator(this.buffer(key));
  }

  /**
   * `count` IDs of `key`, increasing, consecutive within each range of this instance.
   * @throws {InvalidArgumentError} unless `count` is an integer in 1..maxBatchSize.
   * @throws as {@link get}.
   */
  async getIds(key: string, count: number): Promise<bigint[]> {
    const known = this.index[key];
    const buffer = known instanceof SegmentBuffer ? known : await this.discovery.discover(key);
    assertValidCount(count, this.options.maxBatchSize);
    return buffer.take(count);
  }

  /**
   * A contiguous range of `count` IDs `[start, end)`, owned by the caller, above every ID
   * and range this instance handed out for `key` before and below every one it hands out
   * after (docs/design.md, "Ordering"): cut from the key's segments when they have room,
   * otherwise from a fresh allocation of `max(step, count)` whose rest serves later calls.
   * With `after`, the range starts at `after` or above (a client that moved between
   * instances passes the end of its last range).
   * @throws {InvalidArgumentError} unless `count` is an integer in 1..maxRangeCount.
   * @throws as {@link get}.
   */
  async getRange(key: string, count: number, after?: bigint): Promise<IdRange> {
    const known = this.index[key];
    const buffer = known instanceof SegmentBuffer ? known : await this.discovery.discover(key);
    assertValidCount(count, this.options.maxRangeCount ?? this.options.maxBatchSize);
    if (this.store instanceof MultiAllocStore)
      throw new InvalidArgumentError(STRIDED_RANGE, 'count');
    if (after !== undefined && after > buffer.highestEnd) await this.checkAfter(key, after);
    return buffer.takeRange(count, after);
  }

  /**
   * Reads the tag list: adds buffers for new tags, drops buffers of deleted ones.
   * @throws {AllocationError} when the table cannot be read (the old list stays).
   */
  async refreshTags(): Promise<TagRefreshResult> {
    const epoch = ++this.refreshEpoch;
    const tags = new Set(await this.requireStore().listTags());
    for (const tag of tags) this.discovery.forget(tag);
    const added: string[] = [];
    const removed: string[] = [];
    if (this.closing) return { added, removed, total: this.buffers.size, first: false };
    for (const tag of tags) {
      if (!this.buffers.has(tag)) {
        this.buffers.set(tag, this.newBuffer(tag));
        added.push(tag);
      }
    }
    for (const [tag, buffer] of this.buffers) {
      // A tag a look-up found after this refresh read the table is not a deleted one.
      if (!tags.has(tag) && (this.discovered.get(tag) ?? -1) < epoch) {
        buffer.dispose();
        this.buffers.delete(tag);
        this.sampler.forget(tag);
        removed.push(tag);
      }
    }
    if (added.length > 0 || removed.length > 0) this.rebuildIndex();
    const first = this.lastRefreshAt === null;
    this.lastRefreshAt = this.clock.now();
    return { added, removed, total: tags.size, first };
  }

  /**
   * Loads the first range of each of `keys`.
   * @throws {TagNotFoundError} for a key not in the table.
   * @throws as {@link get} for a failed load.
   */
  async warm(keys: readonly string[]): Promise<void> {
    await Promise.all(
      keys.map(async (key) => {
        const buffer = this.buffers.get(key);
        if (!buffer) throw new TagNotFoundError(key);
        await buffer.warm();
      }),
    );
  }

  /**
   * Stops issuing (every buffer is sealed: handles from {@link generator} too) and waits for
   * every load in flight. Never throws.
   */
  async close(): Promise<void> {
    this.closing = true;
    this.index = {};
    for (const buffer of this.buffers.values()) buffer.seal();
    const settle = (load: Promise<unknown> | null) => load?.catch(() => undefined);
    await Promise.all([...this.buffers.values()].map((buffer) => settle(buffer.pendingLoad)));
  }

  /**
   * Hands back the unused tail of every tag's newest range (Leaf issues #15, #78): one
   * guarded `UPDATE … SET max_id = firstUnused WHERE max_id = <our max>` per tag, which
   * changes nothing when another instance allocated since. Only after {@link close} (the
   * buffers are sealed and no load is in flight), and only once. Ranges handed to callers
   * by {@link getRange} are never part of it. Never throws: failures are in the results.
   */
  async handBack(): Promise<HandBackResult[]> {
    if (!this.closing) throw new Error('SegmentCache.handBack() runs only after close()');
    if (!this.store || this.handedBack) return [];
    this.handedBack = true;
    return this.loader.handBack(this.buffers.values());
  }

  /** Samples every tag's issue rate ({@link RunwaySampler.sample}); called by a periodic job. */
  sampleRates(): void {
    this.sampler.sample(this.buffers.values(), this.clock.now());
  }

  /** Each tag's runway ({@link RunwaySampler.runways}). */
  runways(): TagRunway[] {
    return this.sampler.runways(this.buffers.values(), this.clock.now());
  }

  /** Whether segment mode can issue IDs now ({@link segmentReadiness}). */
  readiness(runwayThresholdMs: number): SegmentReadiness {
    const multi = this.store instanceof MultiAllocStore ? this.store : null;
    return segmentReadiness(
      {
        closing: this.closing,
        initialized: this.initialized,
        tags: this.runways(),
        lastAllocationError: this.loader.lastAllocationError,
        databases: multi ? { sources: multi.status(), problems: multi.problems() } : null,
      },
      runwayThresholdMs,
    );
  }

  /** The newest high-water repair of each tag that had one since start, newest first. */
  highWaterRepairs(): TagRepair[] {
    return this.loader.highWaterRepairs();
  }

  /**
   * Serves `tag` at once after this process created its row (the admin API): forgets a
   * negative-cache entry and adds its buffer. Nothing happens while closing or before the
   * tag list was read.
   */
  tagCreated(tag: string): void {
    this.discovery.forget(tag);
    if (this.store && !this.closing && this.lastRefreshAt !== null) this.addBuffer(tag);
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
      ...(this.store instanceof MultiAllocStore ? { databases: this.store.status() } : {}),
    };
  }

  /** Every row of the table (Leaf's `/db`). */
  listAllocations(): Promise<LeafAllocRow[]> {
    return this.requireStore().listAll();
  }

  /**
   * Check, then allocate: a fresh allocation starts at the row's `max_id` as it is now or
   * higher, so an `after` above it cannot be served by one, and is refused before anything
   * is allocated (`max_id` only grows: a refusal here may be early, never wrong). Only for
   * an `after` beyond this instance's ranges: one read, no lock.
   * @throws {InvalidArgumentError} when `after` is above the row's `max_id`.
   * @throws {TagNotFoundError} when the row is gone.
   */
  private async checkAfter(key: string, after: bigint): Promise<void> {
    const row = await this.requireStore().findTag(key);
    if (row === null) throw new TagNotFoundError(key);
    if (after > row.maxId) throw afterTooHigh(key, after);
  }

  /** Hot path: one property load. Everything unusual is sorted out in {@link missingBuffer}. */
  private buffer(key: string): SegmentBuffer {
    const buffer = this.index[key];
    if (buffer instanceof SegmentBuffer) return buffer;
    return this.missingBuffer(key);
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

  /**
   * A key without a buffer on the synchronous paths (`getSync`, `generator`): they cannot wait
   * for the database, so a key not known to be absent starts a look-up and is answered
   * `SegmentNotReadyError` (retry); one the database did not have is `TagNotFoundError`.
   */
  private missingBuffer(key: string): never {
    this.discovery.checkUnknown(key);
    this.discovery.discover(key).catch(() => undefined);
    this.options.observer?.notReady?.('segment', null);
    throw new SegmentNotReadyError(key);
  }

  /** The buffer of `tag`, created (and the hot path's index rebuilt) when it has none. */
  private addBuffer(tag: string): SegmentBuffer {
    this.discovery.forget(tag);
    let buffer = this.buffers.get(tag);
    if (!buffer) {
      buffer = this.newBuffer(tag);
      this.buffers.set(tag, buffer);
      this.discovered.set(tag, this.refreshEpoch);
      this.rebuildIndex();
    }
    return buffer;
  }

  private newBuffer(tag: string): SegmentBuffer {
    return new SegmentBuffer(tag, this.loader.load, this.options, this.clock, this.listener);
  }

  private requireStore(): LeafAllocStore {
    if (!this.store) throw new ModeDisabledError('segment');
    return this.store;
  }
}
