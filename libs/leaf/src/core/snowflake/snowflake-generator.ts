import type { Clock } from '../clock';
import { TimestampOverflowError } from '../errors/timestamp-overflow.error';
import type { LeafObserver } from '../leaf-observer';
import { ClockGuard } from './clock-guard';
import {
  SNOWFLAKE_MAX_SEQUENCE,
  SNOWFLAKE_SEQUENCES,
  type SnowflakeLayout,
} from './snowflake-layout';

/** What the generator needs from the time lease (see {@link TimeLease}). */
export interface SnowflakeLeaseGate {
  /** Last millisecond IDs may be issued in; `-∞` once closed or revoked. Read on every new millisecond. */
  readonly issuableUntil: number;
  /** Called once per new millisecond so the lease can renew ahead of need. */
  maybeRenew(now: number): void;
  /**
   * Resolves once `timestamp` may be issued.
   * @throws {LeafError} when it may not (lease unavailable, shutting down).
   */
  cover(timestamp: number): Promise<void>;
  /** Registers a listener called once the lease stops for good (revoked or released). */
  onStop(listener: () => void): void;
}

/** Settings of a {@link SnowflakeGenerator}. */
export interface SnowflakeGeneratorOptions {
  /** Each new millisecond's sequence starts at a random value in `[0, bound)`; 0 starts at 0. */
  readonly sequenceRandomBound: number;
  /** Largest clock step back that is waited out (twice the offset). */
  readonly clockBackwardsToleranceMs: number;
  /**
   * How long (real time) a waiter for the next millisecond re-reads the clock between
   * event-loop turns before it falls back to `clock.sleep(1)`. 0 sleeps at once.
   * @default 2
   */
  readonly tickPollMs?: number;
  /** Random source in `[0, 1)`. @default Math.random */
  readonly random?: () => number;
  /** Told of clock steps back (metrics, logs); never on the hot path. */
  readonly observer?: LeafObserver | null;
}

/** Monitoring view of a generator. */
export interface SnowflakeGeneratorSnapshot {
  readonly workerId: number;
  readonly lastTimestamp: number;
  readonly sequence: number;
  readonly issued: number;
}

const yieldToEventLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * Leaf-snowflake's generator for one worker ID, as a single-threaded state machine.
 *
 * - `tryNext()` is the synchronous fast path: same millisecond and sequence left → next
 *   sequence; a later millisecond within the lease → random start. Anything else returns
 *   `undefined` and changes nothing.
 * - `next()` / `take()` resolve what blocked the fast path: a used-up millisecond waits for
 *   the next one, a small clock step back is waited out, the lease is extended; everything
 *   else is a typed error. A batch fills each millisecond synchronously and awaits between
 *   milliseconds, so the event loop keeps turning.
 * - Every ID is larger than the one before: the timestamp never goes back and the
 *   sequence only grows within a millisecond. The run starts with `lastTimestamp` at the
 *   lease floor and that millisecond marked used up, so nothing at or below the previous
 *   run's bound is ever issued.
 */
export class SnowflakeGenerator {
  private lastTimestamp: number;
  private sequence: number;
  private readonly maxSequence: number;
  private base = 0n;
  private issued = 0;
  private tick: Promise<void> | null = null;
  private readonly guard: ClockGuard;
  private readonly maxTimestamp: number;
  private readonly randomBound: number;
  private readonly random: () => number;
  private readonly tickPollMs: number;

  constructor(
    private readonly layout: SnowflakeLayout,
    /** Worker ID encoded in every ID (0-1023 in Leaf's layout). */
    readonly workerId: number,
    private readonly clock: Clock,
    private readonly lease: SnowflakeLeaseGate,
    options: SnowflakeGeneratorOptions,
    /** IDs are issued only in milliseconds strictly after this one (the previous run's bound). */
    floor: number,
  ) {
    this.lastTimestamp = floor;
    this.maxSequence = layout.maxSequence;
    this.sequence = layout.maxSequence;
    this.guard = new ClockGuard(clock, options.clockBackwardsToleranceMs, options.observer);
    this.maxTimestamp = layout.maxTimestamp;
    // A narrower sequence field than Leaf's (JavaScript-safe layout) starts within its first
    // quarter, so most of each millisecond stays usable.
    this.randomBound =
      layout.maxSequence < SNOWFLAKE_MAX_SEQUENCE
        ? Math.min(options.sequenceRandomBound, (layout.maxSequence + 1) >> 2)
        : options.sequenceRandomBound;
    this.random = options.random ?? Math.random;
    this.tickPollMs = options.tickPollMs ?? 2;
    // The same-millisecond fast path does not look at the lease: once it stops for good, mark
    // the current millisecond used up, so nothing more is issued even within it.
    lease.onStop(() => {
      this.sequence = this.maxSequence;
    });
  }

  /** The next ID if one can be issued right now without waiting, else `undefined`. */
  tryNext(): bigint | undefined {
    const now = this.clock.now();
    if (now === this.lastTimestamp) {
      if (this.sequence === this.maxSequence) return undefined;
      this.issued++;
      return this.base + SNOWFLAKE_SEQUENCES[++this.sequence]!;
    }
    if (now < this.lastTimestamp || now > this.lease.issuableUntil || now > this.maxTimestamp)
      return undefined;
    this.startMillisecond(now);
    this.issued++;
    return this.base + SNOWFLAKE_SEQUENCES[this.sequence]!;
  }

  /**
   * The next ID, waiting for the next millisecond, a small clock step back or a lease
   * extension when needed.
   * @throws {ClockMovedBackwardsError} when the clock is behind beyond the tolerance.
   * @throws {TimestampOverflowError} when the time no longer fits 41 bits.
   * @throws {TimeLeaseUnavailableError} when the lease cannot be extended.
   * @throws {ShuttingDownError} once the lease was released.
   */
  next(): Promise<bigint> {
    const id = this.tryNext();
    return id !== undefined ? Promise.resolve(id) : this.slowNext();
  }

  /**
   * `count` increasing IDs. Each millisecond is filled synchronously; between milliseconds
   * the batch awaits, so a large batch never blocks the event loop for long. On an error the
   * IDs already taken are dropped (gaps are fine, reuse is not).
   * @throws as {@link next}.
   */
  async take(count: number): Promise<bigint[]> {
    const ids = new Array<bigint>(count);
    let filled = this.fill(ids, 0);
    while (filled < count) {
      await this.unblock();
      filled = this.fill(ids, filled);
    }
    return ids;
  }

  /** Monitoring view. */
  snapshot(): SnowflakeGeneratorSnapshot {
    return {
      workerId: this.workerId,
      lastTimestamp: this.lastTimestamp,
      sequence: this.sequence,
      issued: this.issued,
    };
  }

  /** The last millisecond an ID was issued in (the floor before the first ID). */
  get lastIssuedTimestamp(): number {
    return this.lastTimestamp;
  }

  /** Fills `ids` from `from` with what the current millisecond allows; returns the new fill level. */
  private fill(ids: bigint[], from: number): number {
    const now = this.clock.now();
    let i = from;
    if (now !== this.lastTimestamp) {
      if (now < this.lastTimestamp || now > this.lease.issuableUntil || now > this.maxTimestamp)
        return i;
      this.startMillisecond(now);
      ids[i++] = this.base + SNOWFLAKE_SEQUENCES[this.sequence]!;
    }
    const base = this.base;
    const end = ids.length;
    let sequence = this.sequence;
    const max = this.maxSequence;
    while (i < end && sequence < max) {
      ids[i++] = base + SNOWFLAKE_SEQUENCES[++sequence]!;
    }
    this.sequence = sequence;
    this.issued += i - from;
    return i;
  }

  private startMillisecond(now: number): void {
    this.lastTimestamp = now;
    this.sequence = this.randomBound > 0 ? Math.floor(this.random() * this.randomBound) : 0;
    this.base = this.layout.base(now, this.workerId);
    this.lease.maybeRenew(now);
  }

  private async slowNext(): Promise<bigint> {
    for (;;) {
      await this.unblock();
      const id = this.tryNext();
      if (id !== undefined) return id;
    }
  }

  /** Waits out, or reports, whatever keeps the fast path from issuing right now. */
  private async unblock(): Promise<void> {
    const now = this.clock.now();
    const last = this.lastTimestamp;
    if (now < last) {
      await this.guard.waitOutBackwards(last);
    } else if (now === last) {
      if (this.sequence === this.maxSequence) await this.nextMillisecond(last);
    } else if (now > this.maxTimestamp) {
      throw new TimestampOverflowError(now, this.layout.epoch);
    } else if (now > this.lease.issuableUntil) {
      await this.lease.cover(now);
    }
  }

  /** One shared wait per used-up millisecond, however many callers are waiting. */
  private nextMillisecond(last: number): Promise<void> {
    this.tick ??= this.waitPast(last).finally(() => {
      this.tick = null;
    });
    return this.tick;
  }

  private async waitPast(last: number): Promise<void> {
    // The next millisecond is less than 1 ms away, below timer resolution: a 1 ms timer fires
    // 1-2 ms later and regularly skips a whole millisecond (about a fifth of the throughput at
    // saturation). Re-reading the clock after each event-loop turn ends the wait within
    // microseconds of the tick and lets other work run in between. A clock that does not move
    // within the poll budget (a fake one, a paused VM) gets a real sleep, so this never spins.
    const deadline = performance.now() + this.tickPollMs;
    while (this.clock.now() <= last) {
      if (performance.now() >= deadline) {
        await this.clock.sleep(1);
        return;
      }
      await yieldToEventLoop();
    }
  }
}
