import type { Clock } from '../clock';
import type { LeafObserver } from '../leaf-observer';
import { withTimeout } from '../with-timeout';
import { InvalidArgumentError } from '../errors/invalid-argument.error';
import { errorText, LeafError } from '../errors/leaf.error';
import type { AllocationRegressedError } from '../errors/allocation.error';
import { SegmentNotReadyError } from '../errors/segment-not-ready.error';
import { ShuttingDownError } from '../errors/shutting-down.error';
import { TagNotFoundError } from '../errors/tag-not-found.error';
import type { AllocatedRange } from './leaf-alloc-store.port';
import { idsFrom } from './residue-class';
import { Segment } from './segment';
import { nextStep, type StepPolicyOptions } from './step-policy';

/** Takes one range for `tag`; `step` undefined means "the row's own step". */
export type RangeLoader = (tag: string, step: number | undefined) => Promise<AllocatedRange>;

/** Settings of one buffer. */
export interface SegmentBufferOptions extends StepPolicyOptions {
  /** Fraction of a segment's step that may remain before the next range is loaded. */
  readonly preloadThreshold: number;
  /** How long a request waits for a range when both segments are used up. */
  readonly loadTimeoutMs: number;
  /** Pause before a failed background load may be retried by the preload trigger. */
  readonly retryBackoffMs: number;
  /** Told of not-ready answers (metrics); never on the hot path. */
  readonly observer?: LeafObserver | null;
}

/**
 * Told when a tag's allocations start failing and when they recover: once per failure
 * streak, not per request (loads finish off the hot path).
 */
export interface SegmentLoadListener {
  /** The first failed load of a streak, with its cause. */
  loadFailed(tag: string, error: unknown): void;
  /** A load succeeded after `failures` failed ones. */
  loadRecovered(tag: string, failures: number): void;
  /**
   * Every range refused because it was not above what this instance holds (`max_id` went
   * back): an alert, not a streak (docs/design.md, segment invariants).
   */
  rangeRefused?(error: AllocationRegressedError): void;
  /**
   * Every range the store started at the tag's high-water mark because `max_id` was below
   * it (`range.repair`): the regression was repaired by this allocation.
   */
  rangeRepaired?(range: AllocatedRange): void;
}

/**
 * The unused tail of a buffer's newest range, for handing back after the buffer stopped
 * issuing: `[firstUnused, maxId)`, where `maxId` is the `max_id` this instance's newest
 * allocation read back.
 */
export interface UnusedTail {
  readonly tag: string;
  readonly maxId: bigint;
  readonly firstUnused: bigint;
  /** The database that granted the range (several databases per tag). */
  readonly source?: number;
}

/** Why a contiguous range cannot be cut when several databases serve a tag. */
export const STRIDED_RANGE =
  'contiguous ranges are not served when several databases serve the tag (each serves one residue class): ask for ids instead';

/** The error of an `after` above every ID issued for `tag`: no range can start at it. */
export function afterTooHigh(tag: string, after: bigint): InvalidArgumentError {
  return new InvalidArgumentError(
    `after (${after}) is above every ID issued for tag "${tag}"`,
    'after',
  );
}

/** Rounds of waiting for other loads before a range allocation gives up (see takeRange). */
const MAX_RANGE_ROUNDS = 16;

/** What a finished load reports to whoever awaits it. A load promise never rejects. */
type LoadOutcome = { readonly error?: unknown };

/** Monitoring view of a buffer; bigint values as decimal strings. */
export interface SegmentBufferSnapshot {
  readonly tag: string;
  readonly initialized: boolean;
  readonly loading: boolean;
  readonly step: number;
  readonly baseStep: number;
  readonly loads: number;
  readonly lastLoadAt: number | null;
  readonly lastError: string | null;
  /** Loads failed in a row (0 once one succeeded). */
  readonly failures: number;
  /** IDs handed out since the buffer was created (off the hot path: derived from the cursor). */
  readonly issued: number;
  readonly current: SegmentSnapshot | null;
  readonly next: SegmentSnapshot | null;
  /**
   * Leaf's `currentPos`: the slot (0 or 1) of the current segment in Leaf's two-slot buffer.
   * The first segment is in slot 0 and every switch moves to the other slot.
   */
  readonly pos: number;
  /** The segment used before the current one (what Leaf's other slot shows until `next` arrives). */
  readonly previous: SegmentSnapshot | null;
}

/** Monitoring view of one segment. */
export interface SegmentSnapshot {
  readonly value: string;
  readonly max: string;
  readonly step: number;
  readonly idle: string;
}

function segmentSnapshot(value: bigint, max: bigint, step: number): SegmentSnapshot {
  return { value: value.toString(), max: max.toString(), step, idle: (max - value).toString() };
}

/**
 * Leaf's double buffer for one tag, as a single-threaded state machine.
 *
 * - `tryNext()` is the synchronous hot path: it takes `value++` from the current segment,
 *   switches to the next segment when the current one is used up, and starts a background
 *   load once the current segment passes its preload mark.
 * - Exactly one load is in flight at a time (`loading`); everyone who needs it awaits the
 *   same promise. A load never rejects: its outcome carries the error, so a background
 *   preload nobody waits for cannot become an unhandled rejection.
 * - A load that finishes after `dispose()` is dropped.
 */
export class SegmentBuffer {
  /*
   * The active segment's cursor lives in fields of the buffer itself: `value` is the next
   * ID and `max` the exclusive end. `fast` counts the IDs the hot path may still hand out
   * without looking further — up to the preload mark while a preload is due, up to `max`
   * once it is not. It is a plain number (a step is at most 2^31) because a Smi test is far
   * cheaper than a BigInt comparison; at 0 the slow path decides, and 0 is always safe.
   */
  private value = 0n;
  private max = 0n;
  private fast = 0;
  /**
   * Distance between two IDs of the active segment: 1n with one database; the modulus of the
   * range's residue class with several (docs/design.md, "Several databases per tag"). The
   * fast path only ever steps by 1n: a strided segment keeps `fast` at 0, so each of its IDs
   * takes the slow path, and one database runs exactly the hot path it ran before.
   */
  private stride = 1n;
  /** Metadata of the active segment (its cursor is the fields above); null before the first load. */
  private current: Segment | null = null;
  /** Segments activated so far (Leaf's slot of the current one is `(activations - 1) % 2`). */
  private activations = 0;
  /** Monitoring only: the segment left behind by the last switch. */
  private previous: SegmentSnapshot | null = null;
  private next: Segment | null = null;
  private loading: Promise<LoadOutcome> | null = null;
  private disposed = false;
  /** The dynamic step in force (the step of the last load). */
  private step = 0;
  /** The row's `step` at the last load. */
  private baseStep = 0;
  private loads = 0;
  private lastLoadAt: number | null = null;
  private lastError: unknown = null;
  private failures = 0;
  private retryNotBefore = 0;
  /** IDs of segments already left behind (the cursor of the active one adds the rest). */
  private retired = 0;
  /** Set by {@link seal}: nothing is issued any more, no load starts. */
  private sealed = false;

  constructor(
    /** Business tag served by this buffer. */
    readonly tag: string,
    private readonly loader: RangeLoader,
    private readonly options: SegmentBufferOptions,
    private readonly clock: Clock,
    private readonly listener: SegmentLoadListener | null = null,
  ) {}

  /** True once the first range has arrived. */
  get initialized(): boolean {
    return this.loads > 0;
  }

  /** The end of the highest range this buffer holds (`0n` before the first). */
  get highestEnd(): bigint {
    const next = this.next;
    return next !== null && next.max > this.max ? next.max : this.max;
  }

  /** True while a range load is in flight. */
  get isLoading(): boolean {
    return this.loading !== null;
  }

  /**
   * The next ID if one is available right now, else `undefined` (a load is then started).
   * Never returns a value outside a committed range.
   */
  tryNext(): bigint | undefined {
    if (this.fast > 0) {
      this.fast--;
      const value = this.value;
      this.value = value + 1n;
      return value;
    }
    return this.slowNext();
  }

  /**
   * The next ID if one is available right now.
   * @throws {SegmentNotReadyError} when none is (a load has then been started).
   * @throws {TagNotFoundError} after `dispose()`.
   */
  nextSync(): bigint {
    if (this.fast > 0) {
      this.fast--;
      const value = this.value;
      this.value = value + 1n;
      return value;
    }
    const slow = this.slowNext();
    if (slow === undefined) {
      this.options.observer?.notReady?.('segment', this.tag);
      throw new SegmentNotReadyError(this.tag);
    }
    return slow;
  }

  /**
   * The next ID, waiting up to `loadTimeoutMs` for a range when none is available.
   * @throws {SegmentNotReadyError} when no range arrived in time.
   * @throws {LeafError} the load's own error (unknown tag, lock timeout, overflow, ...).
   */
  async nextAsync(): Promise<bigint> {
    const value = this.tryNext();
    return value !== undefined ? value : this.waitForNext();
  }

  /**
   * Up to `count` consecutive-per-instance IDs, waiting for ranges as needed.
   * @throws as {@link nextAsync}.
   */
  async take(count: number): Promise<bigint[]> {
    const ids: bigint[] = [];
    while (ids.length < count) {
      const value = this.tryNext();
      ids.push(value !== undefined ? value : await this.waitForNext());
    }
    return ids;
  }

  /**
   * Takes `count` contiguous IDs `[start, end)` from the current segment when it has room
   * (or from the loaded next one, when the current one has not: the current one's rest is
   * then a gap); otherwise returns `undefined` and nothing is consumed. With `after`, only
   * IDs `>= after` qualify.
   */
  trySlice(count: number, after = 0n): { start: bigint; end: bigint } | undefined {
    if (this.disposed) throw new TagNotFoundError(this.tag);
    if (this.sealed) throw new ShuttingDownError();
    if (this.current === null) return undefined;
    // A strided segment has no contiguous range to cut (SegmentCache refuses ranges then).
    if (this.stride !== 1n || (this.next !== null && this.next.stride !== 1n)) return undefined;
    const n = BigInt(count);
    if ((this.value + n > this.max || this.value < after) && this.next !== null) {
      const next = this.next;
      if (next.start < after || next.start + n > next.max) return undefined;
      this.activate(next);
      this.next = null;
    }
    const start = this.value;
    const end = start + n;
    if (end > this.max || start < after) return undefined;
    this.value = end;
    this.fast = Math.max(0, this.fast - count);
    // Also when the slice ended exactly at `max`: the next request must find a range loading.
    if (this.fast === 0) this.passedMark();
    return { start, end };
  }

  /**
   * A contiguous range of `count` IDs `[start, end)` above everything this buffer handed out
   * before, and below everything it hands out after (docs/design.md, "Ordering"): cut from
   * the segments in memory when they have room, otherwise from a fresh allocation of
   * `max(step, count)` whose first `count` IDs are the caller's and whose rest becomes the
   * current segment; the IDs the buffer still held are then abandoned (a gap). The
   * allocation waits for a load in flight, so this buffer's allocations stay in order.
   * With `after`, the range starts at `after` or above (a fresh allocation always does when
   * `after` was issued from this tag's ranges, by any instance).
   * @throws {ShuttingDownError} after {@link seal}.
   * @throws {TagNotFoundError} after {@link dispose}.
   * @throws {InvalidArgumentError} when `after` is above every ID issued for the tag.
   * @throws {LeafError} the allocation's own error.
   */
  async takeRange(count: number, after = 0n): Promise<{ start: bigint; end: bigint }> {
    // Each round waits for one load to finish; a busy tag cannot keep this loop going long.
    for (let round = 0; round < MAX_RANGE_ROUNDS; round++) {
      const slice = this.trySlice(count, after);
      if (slice) return slice;
      if (this.loading === null) {
        const range = await this.allocateRange(count);
        // Only an `after` above every ID ever issued for the tag gets here: the fresh range
        // (now a gap) cannot start at it, and no later one would either.
        if (range.start < after) throw afterTooHigh(this.tag, after);
        return range;
      }
      await this.loading;
    }
    this.options.observer?.notReady?.('segment', this.tag);
    throw new SegmentNotReadyError(this.tag);
  }

  private async allocateRange(count: number): Promise<{ start: bigint; end: bigint }> {
    let claimed: { start: bigint; end: bigint } | null = null;
    const outcome = await this.load(Math.max(count, this.step), (range) => {
      claimed = this.installWithRange(range, count);
    });
    if (outcome.error !== undefined) throw outcome.error;
    if (claimed === null) {
      if (this.disposed) throw new TagNotFoundError(this.tag);
      throw new InvalidArgumentError(STRIDED_RANGE, 'count');
    }
    return claimed;
  }

  /**
   * Installs a fresh allocation that serves a range: `[start, start + count)` is the caller's,
   * the rest becomes the current segment, and whatever the buffer still held (the rest of the
   * current segment, the next one) is abandoned, since it lies below the caller's range.
   */
  private installWithRange(
    range: AllocatedRange,
    count: number,
  ): { start: bigint; end: bigint } | null {
    if (this.disposed) return null;
    if ((range.modulus ?? 1) !== 1) {
      // Not contiguous in ID space: serve it as an ordinary segment, refuse the range.
      this.install(range);
      return null;
    }
    const start = range.maxId - BigInt(range.appliedStep);
    const end = start + BigInt(count);
    this.recordLoad(range);
    if (this.step === 0) this.step = range.baseStep;
    this.next = null;
    const rest = Number(range.maxId - end);
    const keep = BigInt(Math.floor(rest * this.options.preloadThreshold));
    this.activate(new Segment(end, range.maxId, rest, range.maxId - keep));
    return { start, end };
  }

  /**
   * Starts loading a range now unless one is in flight or both segments are full, and
   * resolves when the buffer can serve (used to warm tags).
   * @throws the load's error.
   */
  async warm(): Promise<void> {
    if (this.sealed) throw new ShuttingDownError();
    if (this.value < this.max) return;
    const outcome = await (this.loading ?? this.startLoad());
    if (outcome.error !== undefined) throw outcome.error;
  }

  /** Stops serving: later loads are dropped and requests get {@link TagNotFoundError}. */
  dispose(): void {
    this.disposed = true;
    this.current = null;
    this.next = null;
    this.value = this.max = 0n;
    this.fast = 0;
  }

  /**
   * Stops issuing for good (shutdown): every later request gets {@link ShuttingDownError},
   * no load starts, and a load in flight only installs its range. The hot path is not
   * touched: `fast` is zeroed, so the next call reaches the slow path, which refuses.
   */
  seal(): void {
    this.sealed = true;
    this.fast = 0;
  }

  /**
   * The unused tail of the newest range this buffer received, if it is one piece ending at
   * that range's `max_id`: the loaded next segment (with the rest of the current one when
   * the two are contiguous), or the rest of the current one. `null` when nothing is unused.
   * Only meaningful after {@link seal} with no load in flight.
   */
  unusedTail(): UnusedTail | null {
    if (this.disposed || this.current === null) return null;
    if (this.next !== null) {
      const firstUnused = this.max === this.next.start ? this.value : this.next.start;
      return { tag: this.tag, maxId: this.next.max, firstUnused, source: this.next.source };
    }
    if (this.value >= this.max) return null;
    return { tag: this.tag, maxId: this.max, firstUnused: this.value, source: this.current.source };
  }

  /** IDs handed out so far; off the hot path (cursor arithmetic), for rate estimates. */
  get issued(): number {
    return this.current === null
      ? this.retired
      : this.retired + Number((this.value - this.current.start) / this.stride);
  }

  /** IDs in memory not yet handed out: the rest of the current segment plus the next one. */
  get idle(): number {
    if (this.current === null || this.disposed) return 0;
    const rest = idsFrom(this.value, this.max, this.stride);
    return rest + (this.next === null ? 0 : this.next.count);
  }

  /** Loads failed in a row (0 after a success). */
  get failureStreak(): number {
    return this.failures;
  }

  /** The in-flight load, if any, for shutdown to await. Never rejects. */
  get pendingLoad(): Promise<unknown> | null {
    return this.loading;
  }

  /** Monitoring view. */
  snapshot(): SegmentBufferSnapshot {
    return {
      tag: this.tag,
      initialized: this.initialized,
      loading: this.loading !== null,
      step: this.step,
      baseStep: this.baseStep,
      loads: this.loads,
      lastLoadAt: this.lastLoadAt,
      lastError: this.lastError === null ? null : errorText(this.lastError),
      failures: this.failures,
      issued: this.issued,
      current: this.current && segmentSnapshot(this.value, this.max, this.current.step),
      next: this.next && segmentSnapshot(this.next.start, this.next.max, this.next.step),
      pos: this.activations === 0 ? 0 : (this.activations - 1) % 2,
      previous: this.previous,
    };
  }

  /**
   * Past the fast path's bound: either the preload mark (serve, and start the next load)
   * or the end of the segment (switch, or start the load a caller will need).
   */
  private slowNext(): bigint | undefined {
    if (this.disposed) throw new TagNotFoundError(this.tag);
    if (this.sealed) throw new ShuttingDownError();
    const value = this.value;
    if (value < this.max) {
      this.value = value + this.stride;
      // A strided segment comes here for every ID: the preload is due only past its mark.
      if (this.stride === 1n || value >= this.current!.preloadAt) this.passedMark();
      return value;
    }
    if (this.next !== null) {
      this.activate(this.next);
      this.next = null;
      return this.tryNext();
    }
    if (this.loading === null) this.startLoad();
    return undefined;
  }

  /**
   * The active segment is past its preload mark: start the next load unless one is in
   * flight or ready. The fast path then runs to `max`; while a failed load's back-off keeps
   * the preload from starting, `fast` stays 0 so the next call asks again.
   */
  private passedMark(): void {
    if (this.next !== null || this.loading !== null || this.preload())
      this.fast = this.stride === 1n ? Number(this.max - this.value) : 0;
  }

  private activate(segment: Segment): void {
    // The segment left behind was used up (or trimmed to its cursor by a slice): count it.
    if (this.current !== null) {
      this.retired += Number((this.value - this.current.start) / this.stride);
      this.previous = segmentSnapshot(this.value, this.max, this.current.step);
    }
    this.activations++;
    this.current = segment;
    this.value = segment.start;
    this.max = segment.max;
    this.stride = segment.stride;
    this.fast =
      this.sealed || segment.stride !== 1n ? 0 : Number(segment.preloadAt - segment.start);
  }

  private async waitForNext(): Promise<bigint> {
    const deadline = this.clock.now() + this.options.loadTimeoutMs;
    for (;;) {
      const load = this.loading ?? this.startLoad();
      const remaining = deadline - this.clock.now();
      const result = remaining > 0 ? await withTimeout(load, remaining) : { ok: false as const };
      if (!result.ok) {
        this.options.observer?.notReady?.('segment', this.tag);
        throw new SegmentNotReadyError(this.tag);
      }
      const error = result.value.error;
      if (error !== undefined)
        throw error instanceof LeafError
          ? error
          : new SegmentNotReadyError(this.tag, { cause: error });
      const value = this.tryNext();
      if (value !== undefined) return value;
      // Other waiters drained the new range before this one ran: go round for another.
    }
  }

  /** Background trigger: respects the back-off after a failure. True when a load started. */
  private preload(): boolean {
    if (this.clock.now() < this.retryNotBefore) return false;
    void this.startLoad();
    return true;
  }

  private startLoad(): Promise<LoadOutcome> {
    if (this.sealed) return Promise.resolve({ error: new ShuttingDownError() });
    return this.load(this.stepForNextLoad(), (range) => this.install(range));
  }

  /** Loads a range of `step` as the load in flight until it settles; `take` installs it. */
  private load(
    step: number | undefined,
    take: (range: AllocatedRange) => void,
  ): Promise<LoadOutcome> {
    const load = this.loader(this.tag, step).then(
      (range): LoadOutcome => {
        take(range);
        return {};
      },
      (error: unknown) => this.loadFailed(error),
    );
    // Clear the in-flight marker whatever happened, so the next need starts a new load.
    const tracked = load.finally(() => {
      if (this.loading === tracked) this.loading = null;
    });
    this.loading = tracked;
    return tracked;
  }

  private loadFailed(error: unknown): LoadOutcome {
    this.lastError = error;
    if (this.failures++ === 0) this.listener?.loadFailed(this.tag, error);
    this.retryNotBefore = this.clock.now() + this.options.retryBackoffMs;
    // The preload is due again: make the next call leave the fast path and ask.
    this.fast = 0;
    return { error };
  }

  private recordLoad(range: AllocatedRange): void {
    this.baseStep = range.baseStep;
    this.lastLoadAt = this.clock.now();
    this.loads++;
    this.lastError = null;
    if (this.failures > 0) this.listener?.loadRecovered(this.tag, this.failures);
    this.failures = 0;
    this.retryNotBefore = 0;
  }

  /**
   * Leaf's schedule: the first two loads take the row's own step; later ones apply the
   * dynamic step computed from the time since the previous load.
   */
  private stepForNextLoad(): number | undefined {
    if (this.loads < 2 || this.lastLoadAt === null) return undefined;
    return nextStep(this.step, this.baseStep, this.clock.now() - this.lastLoadAt, this.options);
  }

  private install(range: AllocatedRange): void {
    if (this.disposed) return;
    const segment = Segment.fromAllocation(range, this.options.preloadThreshold);
    this.step = range.appliedStep;
    this.recordLoad(range);
    if (this.value >= this.max) {
      this.activate(segment);
    } else {
      this.next = segment;
    }
  }
}
