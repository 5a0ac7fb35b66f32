import { assertValidCount, assertValidKey } from '../arguments';
import type { Clock } from '../clock';
import { ConcurrencyLimiter } from '../concurrency-limiter';
import { monotonicMs } from '../leaf-observer';
import { ModeDisabledError } from '../errors/mode-disabled.error';
import { SegmentNotInitializedError } from '../errors/segment-not-initialized.error';
import { SegmentNotReadyError } from '../errors/segment-not-ready.error';
import { ShuttingDownError } from '../errors/shutting-down.error';
import { TagNotFoundError } from '../errors/tag-not-found.error';
import type { AllocatedRange, LeafAllocRow, LeafAllocStore } from './leaf-alloc-store.port';
import {
  SegmentBuffer,
  type SegmentBufferOptions,
  type SegmentBufferSnapshot,
  type SegmentLoadListener,
  type UnusedTail,
} from './segment-buffer';
import { SegmentGenerator } from './segment-generator';
import { RangeGuard } from './range-guard';
import { AllocationRegressedError } from '../errors/allocation.error';
import { InvalidArgumentError } from '../errors/invalid-argument.error';
import {
  MultiAllocStore,
  type AllocSourceProblem,
  type AllocSourceStatus,
} from './multi-alloc.store';
import { STRIDED_RANGE } from './segment-buffer';

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

/** Settings of a {@link SegmentCache}. */
export interface SegmentCacheOptions extends SegmentBufferOptions {
  /** At most this many range loads run at once, across keys. */
  readonly maxConcurrentLoads: number;
  /** Largest `count` of {@link SegmentCache.getIds}. */
  readonly maxBatchSize: number;
  /** Largest `count` of {@link SegmentCache.getRange}. Default: `maxBatchSize`. */
  readonly maxRangeCount?: number;
  /**
   * How long a key the database did not have is answered `TagNotFoundError` without asking
   * again (the negative cache). Default 5000 ms.
   */
  readonly unknownTagTtlMs?: number;
  /** Most keys the negative cache remembers (the oldest is forgotten first). Default 10,000. */
  readonly unknownTagCacheSize?: number;
}

/** Look-ups of unknown keys running against the database at once (the rest queue). */
const LOOKUP_CONCURRENCY = 2;
/** Look-ups of distinct unknown keys allowed in flight or queued; beyond, `TagNotFoundError` at once. */
const MAX_PENDING_LOOKUPS = 256;

/** One tag's runway: how long the IDs in memory last at its recent issue rate. */
export interface TagRunway {
  readonly tag: string;
  /** IDs in memory not handed out yet (current + next segment). */
  readonly idle: number;
  /** Recent issue rate, IDs per second (0 for a tag nobody asks for). */
  readonly ratePerSecond: number;
  /** `idle / rate` in ms; `null` when the rate is 0 (the IDs last indefinitely). */
  readonly runwayMs: number | null;
  /** Loads failed in a row. */
  readonly failures: number;
}

/** Segment readiness as {@link SegmentCache.readiness} computes it. */
export interface SegmentReadiness {
  readonly ready: boolean;
  /** Why not ready (absent when ready). */
  readonly reason?: string;
  /** True when the most recent allocation (any tag) failed. */
  readonly allocationFailing: boolean;
  /** The cause of that failure. */
  readonly lastAllocationError: string | null;
  /** Every known tag with IDs in memory or traffic. */
  readonly tags: TagRunway[];
  /**
   * Each database and the problems of their tables, when several serve the tags
   * (docs/design.md, "Several databases per tag").
   */
  readonly databases?: {
    readonly sources: AllocSourceStatus[];
    readonly problems: AllocSourceProblem[];
  };
  /**
   * The high-water mark (set by the Nest layer): `off` (not configured), `on`, or
   * `unavailable` (allocations refused; IDs in memory still served).
   */
  readonly highWater?: {
    readonly state: 'off' | 'on' | 'unavailable';
    readonly root: string | null;
    /** The newest repair of each tag that had one since start (at most 20, newest first). */
    readonly repairs: readonly TagRepair[];
  };
}

/** A `max_id` found below the high-water mark and repaired by this instance's allocation. */
export interface TagRepair {
  readonly tag: string;
  /** `max_id` as found. */
  readonly maxId: string;
  /** The mark it was raised to. */
  readonly highWater: string;
  readonly kind: 'regression' | 'unconfirmed-commit';
  /** When (the cache's clock, ms). */
  readonly at: number;
}

/** Repairs remembered for readiness. */
const MAX_REPAIRS_SHOWN = 20;

/** The outcome of handing back one tag's unused tail ({@link SegmentCache.handBack}). */
export interface HandBackResult extends UnusedTail {
  /** True when `max_id` was lowered to `firstUnused`. */
  readonly handedBack: boolean;
  /** Why it was not attempted or failed, when it did not happen. */
  readonly error?: unknown;
}

/** Time constant of the issue-rate average. */
const RATE_TAU_MS = 10_000;
/** Samples closer together than this are skipped (a probe storm costs nothing). */
const MIN_SAMPLE_INTERVAL_MS = 200;

interface RateSample {
  at: number;
  issued: number;
  /** Exponentially weighted average, IDs/s. */
  average: number;
  /** Rate over the last sample interval, IDs/s. */
  last: number;
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
 *   those of deleted ones; an unknown key is `TagNotFoundError`, never a new row.
 * - Range loads of all keys share one concurrency limit; each buffer keeps one load in
 *   flight.
 * - {@link close} stops issuing at once and waits for every load in flight (the range
 *   allocations of {@link getRange} are loads of their buffer), so no transaction outlives
 *   the cache.
 * - Every range passes a {@link RangeGuard} before anyone sees it: a range not above what
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
  private readonly limiter: ConcurrencyLimiter;
  private readonly loader: (tag: string, step: number | undefined) => Promise<AllocatedRange>;
  private lastRefreshAt: number | null = null;
  /** Negative cache: unknown key → until when it is answered `TagNotFoundError` without a query. */
  private readonly absent = new Map<string, number>();
  /** Look-ups of unknown keys in flight: concurrent requests for one key share one query. */
  private readonly lookups = new Map<string, Promise<SegmentBuffer>>();
  private readonly lookupLimiter = new ConcurrencyLimiter(LOOKUP_CONCURRENCY);
  /** Bumped at the start of every {@link refreshTags}. */
  private refreshEpoch = 0;
  /** Tags added by a look-up, with the refresh epoch they were added in. */
  private readonly discovered = new Map<string, number>();
  private closing = false;
  /** Issue-rate samples per tag, taken off the hot path ({@link sampleRates}). */
  private readonly rates = new Map<string, RateSample>();
  /** The outcome of the most recent allocation, any tag: `null` = it succeeded (or none yet). */
  private lastAllocationError: unknown = null;
  private handedBack = false;
  private readonly guard = new RangeGuard();
  /** The newest repair per tag (insertion order = age). */
  private readonly repairs = new Map<string, TagRepair>();

  constructor(
    private readonly store: LeafAllocStore | null,
    private readonly options: SegmentCacheOptions,
    private readonly clock: Clock,
    private readonly listener: SegmentLoadListener | null = null,
  ) {
    this.limiter = new ConcurrencyLimiter(options.maxConcurrentLoads);
    this.loader = (tag, step) => {
      // Taken before the transaction: every range held now was committed before it.
      const floor = this.guard.floor(tag);
      return this.limiter
        .run(() => this.timedAllocate(tag, step))
        .then(
          (range) => {
            if (range.repair) {
              this.repairs.delete(tag);
              this.repairs.set(tag, {
                tag,
                maxId: range.repair.maxId.toString(),
                highWater: range.repair.highWater.toString(),
                kind: range.repair.kind,
                at: this.clock.now(),
              });
              if (this.repairs.size > MAX_REPAIRS_SHOWN) {
                this.repairs.delete(this.repairs.keys().next().value!);
              }
              this.options.observer?.maxIdRegression?.(tag, range.repair.kind, true);
              this.listener?.rangeRepaired?.(range);
            }
            try {
              this.guard.admit(range, floor);
            } catch (error) {
              if (error instanceof AllocationRegressedError) {
                this.options.observer?.maxIdRegression?.(tag, 'range-guard', false);
                this.listener?.rangeRefused?.(error);
              }
              throw error;
            }
            this.lastAllocationError = null;
            return range;
          },
          (error: unknown) => {
            // A deleted tag says nothing about the database.
            if (!(error instanceof TagNotFoundError)) this.lastAllocationError = error;
            throw error;
          },
        );
    };
  }

  /** True once the tag list has been read at least once. */
  get initialized(): boolean {
    return this.lastRefreshAt !== null;
  }

  /** One store allocation, its duration reported to the observer (metrics) when it completes. */
  private timedAllocate(tag: string, step: number | undefined): Promise<AllocatedRange> {
    const store = this.requireStore();
    const observer = this.options.observer;
    if (!observer?.rangeLoaded) return store.allocate(tag, step);
    const started = monotonicMs();
    return store.allocate(tag, step).then(
      (range) => {
        observer.rangeLoaded!(tag, monotonicMs() - started, true);
        return range;
      },
      (error: unknown) => {
        observer.rangeLoaded!(tag, monotonicMs() - started, false);
        throw error;
      },
    );
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
      return this.discover(key).then((found) => found.nextAsync());
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
    const buffer = known instanceof SegmentBuffer ? known : await this.discover(key);
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
    const buffer = known instanceof SegmentBuffer ? known : await this.discover(key);
    assertValidCount(count, this.options.maxRangeCount ?? this.options.maxBatchSize);
    if (this.store instanceof MultiAllocStore)
      throw new InvalidArgumentError(STRIDED_RANGE, 'count');
    return buffer.takeRange(count, after);
  }

  /**
   * Reads the tag list: adds buffers for new tags, drops buffers of deleted ones.
   * @throws {AllocationError} when the table cannot be read (the old list stays).
   */
  async refreshTags(): Promise<TagRefreshResult> {
    const epoch = ++this.refreshEpoch;
    const tags = new Set(await this.requireStore().listTags());
    for (const tag of tags) this.absent.delete(tag);
    const added: string[] = [];
    const removed: string[] = [];
    if (this.closing) return { added, removed, total: this.buffers.size, first: false };
    for (const tag of tags) {
      if (!this.buffers.has(tag)) {
        this.buffers.set(
          tag,
          new SegmentBuffer(tag, this.loader, this.options, this.clock, this.listener),
        );
        added.push(tag);
      }
    }
    for (const [tag, buffer] of this.buffers) {
      // A tag a look-up found after this refresh read the table is not a deleted one.
      if (!tags.has(tag) && (this.discovered.get(tag) ?? -1) < epoch) {
        buffer.dispose();
        this.buffers.delete(tag);
        this.rates.delete(tag);
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
    const store = this.store;
    const tails = [...this.buffers.values()]
      .filter((buffer) => !buffer.isLoading)
      .map((buffer) => buffer.unusedTail())
      .filter((tail): tail is UnusedTail => tail !== null);
    return Promise.all(
      tails.map((tail) =>
        this.limiter
          .run(() => store.handBack(tail.tag, tail.maxId, tail.firstUnused, tail.source))
          .then(
            (handedBack): HandBackResult => ({ ...tail, handedBack }),
            (error: unknown): HandBackResult => ({ ...tail, handedBack: false, error }),
          ),
      ),
    );
  }

  /**
   * Samples every buffer's issued-ID counter and updates its rate estimate. Cheap (one
   * subtraction per tag) and off the hot path: called by a periodic job and by readiness.
   */
  sampleRates(): void {
    const now = this.clock.now();
    for (const [tag, buffer] of this.buffers) {
      const issued = buffer.issued;
      const sample = this.rates.get(tag);
      if (!sample) {
        this.rates.set(tag, { at: now, issued, average: 0, last: 0 });
        continue;
      }
      const elapsed = now - sample.at;
      if (elapsed < MIN_SAMPLE_INTERVAL_MS) continue;
      const last = (Math.max(0, issued - sample.issued) * 1000) / elapsed;
      const weight = 1 - Math.exp(-elapsed / RATE_TAU_MS);
      sample.average += weight * (last - sample.average);
      sample.last = last;
      sample.at = now;
      sample.issued = issued;
    }
  }

  /**
   * Each tag's runway: IDs in memory ÷ recent issue rate (the larger of the average and the
   * last interval's rate, so a surge shortens it at once).
   */
  runways(): TagRunway[] {
    this.sampleRates();
    return [...this.buffers.values()].map((buffer) => {
      const sample = this.rates.get(buffer.tag);
      const rate = sample ? Math.max(sample.average, sample.last) : 0;
      const idle = buffer.idle;
      return {
        tag: buffer.tag,
        idle,
        ratePerSecond: Math.round(rate * 100) / 100,
        runwayMs: rate > 0 ? Math.round((idle / rate) * 1000) : null,
        failures: buffer.failureStreak,
      };
    });
  }

  /**
   * Readiness that leads: not ready before the tag list is loaded, once closing, and when the
   * most recent allocation failed while some active tag's runway is below `runwayThresholdMs`
   * (IDs are still served, but will run out before the database is likely back). A threshold
   * of 0 turns the runway rule off.
   */
  readiness(runwayThresholdMs: number): SegmentReadiness {
    const tags = this.runways();
    const error = this.lastAllocationError;
    const multi = this.store instanceof MultiAllocStore ? this.store : null;
    const databases = multi ? { sources: multi.status(), problems: multi.problems() } : null;
    const base = {
      allocationFailing: error !== null,
      lastAllocationError: error === null ? null : describeError(error),
      tags,
      ...(databases ? { databases } : {}),
    };
    if (this.closing) return { ...base, ready: false, reason: 'shutting down' };
    if (!this.initialized) return { ...base, ready: false, reason: 'tag list not loaded' };
    if (databases && databases.problems.length > 0) {
      const list = databases.problems.map((p) => `${p.tag}: ${p.detail}`).join('; ');
      return { ...base, ready: false, reason: `the databases disagree on tags: ${list}` };
    }
    if (error !== null && runwayThresholdMs > 0) {
      const short = tags.filter((t) => t.runwayMs !== null && t.runwayMs < runwayThresholdMs);
      if (short.length > 0) {
        const list = short.map((t) => `${t.tag} (${t.runwayMs} ms)`).join(', ');
        return {
          ...base,
          ready: false,
          reason: `allocations failing (${describeError(error)}); runway below ${runwayThresholdMs} ms: ${list}`,
        };
      }
    }
    return { ...base, ready: true };
  }

  /** The newest high-water repair of each tag that had one since start, newest first. */
  highWaterRepairs(): TagRepair[] {
    return [...this.repairs.values()].reverse();
  }

  /** True once {@link close} has begun. */
  get isClosing(): boolean {
    return this.closing;
  }

  /**
   * Serves `tag` at once after this process created its row (the admin API): forgets a
   * negative-cache entry and adds its buffer. Nothing happens while closing or before the
   * tag list was read.
   */
  tagCreated(tag: string): void {
    this.absent.delete(tag);
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
    this.checkUnknown(key);
    this.discover(key).catch(() => undefined);
    this.options.observer?.notReady?.('segment', null);
    throw new SegmentNotReadyError(key);
  }

  /**
   * Throws what a key without a buffer is answered before any look-up: mode off, malformed
   * key, closing, tag list not read yet, or a key the database did not have within
   * `unknownTagTtlMs` (the negative cache).
   */
  private checkUnknown(key: string): void {
    if (!this.store) throw new ModeDisabledError('segment');
    assertValidKey(key);
    if (this.closing) throw new ShuttingDownError();
    if (this.lastRefreshAt === null) throw new SegmentNotInitializedError();
    const until = this.absent.get(key);
    if (until !== undefined) {
      if (this.clock.now() < until) throw new TagNotFoundError(key);
      this.absent.delete(key);
    }
  }

  /**
   * The buffer of a key created after the last tag refresh (on any instance): one
   * `findTag` per key at a time, shared by every concurrent request for it, at most
   * {@link LOOKUP_CONCURRENCY} queries at once. A key the database does not have is
   * remembered for `unknownTagTtlMs`, so random keys cost one query each per period.
   */
  private discover(key: string): Promise<SegmentBuffer> {
    try {
      this.checkUnknown(key);
    } catch (error) {
      return Promise.reject(error);
    }
    const known = this.buffers.get(key);
    if (known) return Promise.resolve(known);
    const pending = this.lookups.get(key);
    if (pending) return pending;
    // Beyond this many distinct keys in flight, nobody waits in a queue of random keys.
    if (this.lookups.size >= MAX_PENDING_LOOKUPS) return Promise.reject(new TagNotFoundError(key));
    const store = this.requireStore();
    const lookup = this.lookupLimiter
      .run(() => store.findTag(key))
      .then((row) => this.admit(key, row !== null))
      .finally(() => this.lookups.delete(key));
    this.lookups.set(key, lookup);
    return lookup;
  }

  /** The outcome of a look-up: a buffer for a row found, the negative cache otherwise. */
  private admit(key: string, exists: boolean): SegmentBuffer {
    if (this.closing) throw new ShuttingDownError();
    if (!exists) {
      const size = this.options.unknownTagCacheSize ?? 10_000;
      if (this.absent.size >= size) {
        const oldest = this.absent.keys().next();
        if (!oldest.done) this.absent.delete(oldest.value);
      }
      this.absent.set(key, this.clock.now() + (this.options.unknownTagTtlMs ?? 5000));
      throw new TagNotFoundError(key);
    }
    return this.addBuffer(key);
  }

  /** The buffer of `tag`, created (and the hot path's index rebuilt) when it has none. */
  private addBuffer(tag: string): SegmentBuffer {
    this.absent.delete(tag);
    let buffer = this.buffers.get(tag);
    if (!buffer) {
      buffer = new SegmentBuffer(tag, this.loader, this.options, this.clock, this.listener);
      this.buffers.set(tag, buffer);
      this.discovered.set(tag, this.refreshEpoch);
      this.rebuildIndex();
    }
    return buffer;
  }

  private requireStore(): LeafAllocStore {
    if (!this.store) throw new ModeDisabledError('segment');
    return this.store;
  }
}

function describeError(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}
