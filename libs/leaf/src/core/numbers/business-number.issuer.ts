/**
 * Business numbers as plain TypeScript (docs/design.md, "Business numbers"): a tag's format,
 * the period the database's clock is in, that period's counter row in `leaf_alloc` and the
 * mode that issues its counters. The Nest `BusinessNumberService` wires it to the modes.
 */
import type { Clock } from '../clock';
import { AllocationError } from '../errors/allocation.error';
import { InvalidArgumentError } from '../errors/invalid-argument.error';
import { TagExistsError } from '../errors/tag-exists.error';
import { TagNotFoundError } from '../errors/tag-not-found.error';
import type { LeafAllocStore } from '../segment/leaf-alloc-store.port';
import { DatabaseClock, databaseNowBounds } from './database-clock';
import { counterTag, type NumberFormat, type NumberMode } from './number-format';
import { NumberFormatCache, type FormatState, type ServedPeriod } from './number-format.cache';
import type { NumberFormatStore } from './number-format-store.port';
import { decodeNumber, type DecodedNumber } from './number-text';

/**
 * The issuer's timings, as `BusinessNumberService` runs it: the database's clock is read at
 * least once a minute, a reading's bounds widened by 50 ms each side (a local clock running
 * 830 ppm off the database's over that minute; NTP slews at most 500 ppm), formats re-read
 * every minute, a tag without a format remembered 5 s.
 */
export const BUSINESS_NUMBER_TIMINGS: BusinessNumberIssuerOptions = {
  clockMaxAgeMs: 60_000,
  clockMarginMs: 50,
  formatTtlMs: 60_000,
  missingFormatTtlMs: 5000,
};

/** Counters of one mode, as the issuer asks for them: the mode's service is one. */
export interface NumberCounters {
  /** One counter of the `leaf_alloc` row `counterTag`. */
  get(counterTag: string): Promise<bigint>;
  /** `count` counters of the row, increasing. */
  getIds(counterTag: string, count: number): Promise<bigint[]>;
  /**
   * The row's counters without waiting: `next()` takes one while the mode has it in memory, and
   * throws otherwise (segment mode's `SegmentGenerator`); the issuer then waits through
   * {@link get}. Throws when the mode cannot give one now.
   */
  generator?(counterTag: string): { next(): bigint };
}

/** Settings of {@link BusinessNumberIssuer}. */
export interface BusinessNumberIssuerOptions {
  /** A reading of the database's clock is used this long, then read again. */
  readonly clockMaxAgeMs: number;
  /** Covers the local clock's rate drift against the database's over `clockMaxAgeMs`. */
  readonly clockMarginMs: number;
  /** A format read from the table is read again after this long (in the background). */
  readonly formatTtlMs: number;
  /** A tag without a format is answered without a query for this long. */
  readonly missingFormatTtlMs: number;
}

/** What {@link BusinessNumberIssuer} is built on. */
export interface BusinessNumberIssuerDeps {
  readonly formats: NumberFormatStore;
  /** The `leaf_alloc` rows: the base tag's step, the period rows created on first use. */
  readonly rows: LeafAllocStore;
  /** The counters of `mode`. @throws {ModeDisabledError} when the mode is off. */
  readonly counters: (mode: NumberMode) => NumberCounters;
  /** Told when a period's counter row was created or found, to serve it at once. */
  readonly counterReady?: (counterTag: string) => void;
  readonly clock: Clock;
  readonly monotonic: () => number;
  readonly options: BusinessNumberIssuerOptions;
}

/** A period attempt loses its numbers past its deadline; after this many, the call fails. */
const MAX_ATTEMPTS = 5;
/**
 * Issues a tag's business numbers: `next(tag)` → `ORD-20261204-000123`.
 *
 * - The **period** is the database's: its clock is read (`DatabaseClock`) and the format's
 *   time zone's calendar says which day, month or year that is. The period is served until a
 *   deadline on the local monotonic clock at which the database's clock may reach the
 *   period's end (`databaseNowBounds`); then the clock is read again. Near a boundary, when
 *   the database may be on either side, calls wait until it is surely past.
 * - The **counter** of a period is its own `leaf_alloc` row (`counterTag`), created by the
 *   first instance that needs it (`max_id` 1, the base tag's step), so it starts at 1 once.
 * - A number whose counter came back after its period's deadline is dropped and the call
 *   tries the new period: no instance returns a number of a period after its deadline.
 */
export class BusinessNumberIssuer {
  /** The formats served (`reservedBy` for the ID routes, `changed` for a format defined here). */
  readonly formats: NumberFormatCache;
  /** The state the last number came from (most callers ask for one tag in a row). */
  private lastTag: string | null = null;
  private lastState: FormatState | undefined = undefined;
  private readonly clock: DatabaseClock;

  constructor(private readonly deps: BusinessNumberIssuerDeps) {
    this.formats = new NumberFormatCache(deps.formats, deps.monotonic, deps.options);
    this.clock = new DatabaseClock(
      () => deps.formats.databaseNow(),
      deps.monotonic,
      deps.options.clockMaxAgeMs,
    );
  }

  /**
   * The next number of `tag` (without a microtask of its own when the mode has a counter in
   * memory).
   * @throws {NumberFormatNotFoundError} when the tag has no format.
   * @throws {InvalidArgumentError} when `mode` is given and is not the format's.
   * @throws {NumberOverflowError} when the period's counter outgrew the width.
   * @throws {LeafError} the mode's own errors; `AllocationError` when the database's clock
   *   cannot be read.
   */
  next(tag: string, mode?: NumberMode): Promise<string> {
    // The hot path: a known format in a period being served, a counter in memory. The clock
    // is read after the counter was taken, so the check covers the take (as below).
    const last = this.lastState;
    const state =
      tag === this.lastTag && last !== undefined && !last.superseded
        ? last
        : this.formats.peek(tag);
    const period = state?.period;
    const generator = period?.generator;
    if (generator && state !== undefined && (mode === undefined || mode === state.format.mode)) {
      let counter: bigint | undefined;
      try {
        counter = generator.next();
      } catch {
        // Nothing in memory (or an error the waiting path reports): take that path.
      }
      if (counter !== undefined) {
        const now = this.deps.monotonic();
        if (now < period.deadline) {
          this.formats.touch(state, now);
          this.lastTag = tag;
          this.lastState = state;
          try {
            return Promise.resolve(state.printer.print(period.head, period.key, counter));
          } catch (error) {
            return Promise.reject(error);
          }
        }
        // Taken past the deadline: dropped (a gap at the end of the period).
      }
    }
    return this.waiting(
      tag,
      mode,
      (counters, row) => counters.get(row),
      (state, period, counter) => state.printer.print(period.head, period.key, counter),
    );
  }

  /**
   * `count` numbers of `tag`, increasing, all of one period.
   * @throws {InvalidArgumentError} unless `count` is in the mode's batch range.
   * @throws as {@link next}.
   */
  async nextBatch(tag: string, count: number, mode?: NumberMode): Promise<string[]> {
    const state = this.formats.peek(tag);
    const period = state?.period;
    const counters = state?.counters;
    if (period && counters && (mode === undefined || mode === state.format.mode)) {
      const values = await counters.getIds(period.counterTag, count);
      const now = this.deps.monotonic();
      if (now < period.deadline) {
        this.formats.touch(state, now);
        return state.printer.printAll(period.head, period.key, values);
      }
    }
    return this.waiting(
      tag,
      mode,
      (counters, row) => counters.getIds(row, count),
      (state, period, values) => state.printer.printAll(period.head, period.key, values),
    );
  }

  /**
   * The waiting path of {@link next} and {@link nextBatch}. Counters that came back past their
   * period's deadline are dropped (a gap at the end of that period, never printed with a date
   * the database has left) and the next period is tried.
   */
  private async waiting<C, R>(
    tag: string,
    mode: NumberMode | undefined,
    take: (counters: NumberCounters, counterTag: string) => Promise<C>,
    print: (state: FormatState, period: ServedPeriod, counters: C) => R,
  ): Promise<R> {
    const state = await this.formats.state(tag);
    const { format } = state;
    if (mode !== undefined && mode !== format.mode) {
      throw new InvalidArgumentError(
        `tag "${format.tag}" has ${format.mode} business numbers: ask /api/${format.mode}/…`,
        'mode',
      );
    }
    const counters = (state.counters ??= this.deps.counters(format.mode));
    for (let attempt = 1; ; attempt++) {
      const period = await this.served(state);
      const taken = await take(counters, period.counterTag);
      if (this.deps.monotonic() < period.deadline) return print(state, period, taken);
      if (attempt >= MAX_ATTEMPTS) {
        throw failed(
          tag,
          `no counter came back within its period's deadline in ${MAX_ATTEMPTS} attempts`,
        );
      }
    }
  }

  /**
   * What `text` says under `tag`'s format: period, counter, counter row, mode.
   * @throws {NumberFormatNotFoundError} when the tag has no format.
   * @throws {InvalidArgumentError} when `text` is not one of its numbers.
   */
  async decode(tag: string, text: string): Promise<DecodedNumber> {
    const state = await this.formats.state(tag);
    const decoded = decodeNumber(state.format, text);
    if (decoded.period !== null && state.calendar !== null && state.unit !== null) {
      try {
        state.calendar.periodOf(decoded.period, state.unit);
      } catch {
        throw new InvalidArgumentError(`"${text}" has no valid date`, 'number');
      }
    }
    return decoded;
  }

  /**
   * The period the database's clock is in now for `tag`, as this instance serves it.
   * @throws as {@link next}.
   */
  async currentPeriod(tag: string): Promise<{ key: string; counterTag: string }> {
    const period = await this.served(await this.formats.state(tag));
    return { key: period.key, counterTag: period.counterTag };
  }

  /**
   * The state's period while its deadline is ahead, else the current one decided (one decision
   * per state at a time; callers share it).
   */
  private served(state: FormatState): ServedPeriod | Promise<ServedPeriod> {
    const period = state.period;
    if (period !== null && this.deps.monotonic() < period.deadline) return period;
    state.resolving ??= this.decide(state).finally(() => {
      state.resolving = null;
    });
    return state.resolving;
  }

  private async decide(state: FormatState): Promise<ServedPeriod> {
    const { format, unit, calendar } = state;
    if (unit === null || calendar === null) {
      // No date and no reset: one counter, the base tag's row, for ever.
      return this.serve(state, '', Infinity);
    }
    const { clockMarginMs: margin } = this.deps.options;
    // After a deadline, read the clock again: a reading taken before it decided that period.
    let notBefore = state.period?.deadline ?? -Infinity;
    for (let round = 0; ; round++) {
      const reading = await this.clock.reading(notBefore).catch((error: unknown) => {
        throw failed(format.tag, `the database's clock cannot be read (${String(error)})`, {
          cause: error,
        });
      });
      notBefore = -Infinity;
      const at = this.deps.monotonic();
      const { low, high } = databaseNowBounds(reading, at, margin);
      let period = state.lastComputed;
      if (period === null || low < period.start || low >= period.end) {
        // The calendar's search runs once per period.
        try {
          period = state.lastComputed = calendar.period(low, unit);
        } catch (error) {
          const instant = new Date(low).toISOString();
          throw failed(
            format.tag,
            `the database's clock (${instant}) has no period: ${String(error)}`,
          );
        }
      }
      if (high < period.end) {
        // Surely inside `period` until `high` reaches its end, and a reading is only trusted
        // for `maxAgeMs`.
        const deadline = Math.min(
          reading.sentAt + (period.end - reading.databaseMs) - margin,
          reading.sentAt + this.deps.options.clockMaxAgeMs,
        );
        return this.serve(state, period.key, deadline);
      }
      if (round >= 8) {
        throw failed(format.tag, "the database's clock did not settle on one period");
      }
      // The database may be on either side of the period's end: wait until even the low
      // bound is past it (the round trip plus twice the margin at most).
      const wait = reading.receivedAt + (period.end - reading.databaseMs) + margin - at;
      await this.deps.clock.sleep(Math.max(1, Math.ceil(wait)));
    }
  }

  /** Installs the period `key` until `deadline`, its counter row created first if missing. */
  private async serve(state: FormatState, key: string, deadline: number): Promise<ServedPeriod> {
    const counter = counterTag(state.format, key);
    if (state.period?.counterTag !== counter) await this.ensureCounter(state.format, counter);
    let generator: ServedPeriod['generator'] = null;
    try {
      state.counters ??= this.deps.counters(state.format.mode);
      generator = state.counters.generator?.(counter) ?? null;
    } catch {
      // Not served from memory yet (e.g. the tag list not read): every call waits.
    }
    // A change of the format meanwhile installed another state: this one still serves its
    // callers, the next call takes the new one.
    state.period = { key, head: state.printer.head(key), counterTag: counter, deadline, generator };
    return state.period;
  }

  /**
   * Makes sure the counter row exists: the base tag's own row without a reset, else a row
   * `tag:period` with `max_id` 1 and the base tag's step, inserted by whichever instance comes
   * first (a duplicate is someone else's insert: the row is used as it is).
   */
  private async ensureCounter(format: NumberFormat, counter: string): Promise<void> {
    const rows = this.deps.rows;
    if (counter !== format.tag && (await rows.findTag(counter)) === null) {
      const base = await rows.findTag(format.tag);
      if (base === null) throw new TagNotFoundError(format.tag);
      try {
        await rows.createTag({
          tag: counter,
          maxId: 1n,
          step: base.step,
          description: `${format.tag}: business numbers of ${counter.slice(format.tag.length + 1)}`,
        });
      } catch (error) {
        if (!(error instanceof TagExistsError)) throw error;
      }
    }
    this.deps.counterReady?.(counter);
  }
}

/** An `AllocationError` of `tag`, its message naming the tag first. */
function failed(tag: string, reason: string, options?: { cause: unknown }): AllocationError {
  return new AllocationError(tag, `Tag "${tag}": ${reason}`, options);
}
