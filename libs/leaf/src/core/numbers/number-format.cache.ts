/**
 * The formats an instance serves, read from `leaf_number_format` on a tag's first call and
 * again in the background once `formatTtlMs` old; a tag without a format is remembered for
 * `missingFormatTtlMs`, so random tags cost one query each per period.
 */
import { NumberFormatNotFoundError } from '../errors/number-format.error';
import { formatUnit, type CalendarUnit, type NumberFormat } from './number-format';
import type { NumberFormatStore } from './number-format-store.port';
import type { NumberCounters } from './business-number.issuer';
import { NumberPrinter } from './number-text';
import { ZonedCalendar, type CalendarPeriod } from './zoned-calendar';

/** A period as a format's numbers are served in it, until `deadline` on the monotonic clock. */
export interface ServedPeriod {
  /** The date part (`20261204`; `''` without one). */
  readonly key: string;
  /** Everything a number prints before its counter. */
  readonly head: string;
  /** The `leaf_alloc` row of the period's counter. */
  readonly counterTag: string;
  readonly deadline: number;
  /** Takes one of the row's counters from memory (throws when there is none); `null`: none. */
  readonly take: (() => bigint) | null;
}

/** A format with what serving it needs; the period fields belong to `BusinessNumberIssuer`. */
export interface FormatState {
  readonly format: NumberFormat;
  readonly printer: NumberPrinter;
  /** The unit of the date part (or of the reset); `null`: one counter for ever. */
  readonly unit: CalendarUnit | null;
  readonly calendar: ZonedCalendar | null;
  loadedAt: number;
  period: ServedPeriod | null;
  resolving: Promise<ServedPeriod> | null;
  /** The last calendar period computed (its search runs once per period). */
  lastComputed: CalendarPeriod | null;
  refreshing: boolean;
  /** The counters of the format's mode, once asked for. */
  counters?: NumberCounters;
  /** Set once another state took its place (the format changed or was deleted). */
  superseded: boolean;
}

/** Formats a negative cache remembers at most. */
const MISSING_CACHE_SIZE = 10_000;

/** The cache of formats; see the file. */
export class NumberFormatCache {
  private readonly states = new Map<string, FormatState>();
  private readonly loading = new Map<string, Promise<FormatState>>();
  /** Tags without a format → until when (monotonic) they are answered without a query. */
  private readonly missing = new Map<string, number>();

  constructor(
    private readonly formats: NumberFormatStore,
    private readonly monotonic: () => number,
    private readonly options: { readonly formatTtlMs: number; readonly missingFormatTtlMs: number },
  ) {}

  /**
   * The state of `tag`: the cached one (refreshed in the background once old), else read.
   * @throws {NumberFormatNotFoundError} when the tag has no format.
   * @throws {AllocationError} when the table cannot be read.
   */
  state(tag: string): FormatState | Promise<FormatState> {
    return this.cached(tag) ?? this.load(tag);
  }

  /** The cached state of `tag`, or `undefined` (nothing read, nothing refreshed). */
  peek(tag: string): FormatState | undefined {
    return this.states.get(tag);
  }

  /** Refreshes `state` in the background once older than `formatTtlMs` at `now`. */
  touch(state: FormatState, now: number): void {
    if (!state.refreshing && now - state.loadedAt > this.options.formatTtlMs) this.refresh(state);
  }

  /** Takes `format` at once (defined or changed through this instance). */
  changed(format: NumberFormat): void {
    this.missing.delete(format.tag);
    this.install(format);
  }

  private cached(tag: string): FormatState | null {
    const state = this.states.get(tag);
    if (state === undefined) return null;
    this.touch(state, this.monotonic());
    return state;
  }

  private refresh(state: FormatState): void {
    const tag = state.format.tag;
    state.refreshing = true;
    this.formats.findFormat(tag).then(
      (format) => {
        state.refreshing = false;
        state.loadedAt = this.monotonic();
        if (format === null) {
          // Deleted by hand: served no more.
          if (this.states.get(tag) === state) this.states.delete(tag);
        } else if (!sameFormat(format, state.format)) {
          this.install(format);
        }
      },
      () => {
        // The database is down: keep the format; try again at the next call.
        state.refreshing = false;
      },
    );
  }

  private load(tag: string): Promise<FormatState> {
    const until = this.missing.get(tag);
    if (until !== undefined) {
      if (this.monotonic() < until) return Promise.reject(new NumberFormatNotFoundError(tag));
      this.missing.delete(tag);
    }
    const pending = this.loading.get(tag);
    if (pending) return pending;
    const loading = this.formats
      .findFormat(tag)
      .then((format) => {
        if (format === null) {
          if (this.missing.size >= MISSING_CACHE_SIZE) {
            const oldest = this.missing.keys().next();
            if (!oldest.done) this.missing.delete(oldest.value);
          }
          this.missing.set(tag, this.monotonic() + this.options.missingFormatTtlMs);
          throw new NumberFormatNotFoundError(tag);
        }
        return this.states.get(tag) ?? this.install(format);
      })
      .finally(() => this.loading.delete(tag));
    this.loading.set(tag, loading);
    return loading;
  }

  private install(format: NumberFormat): FormatState {
    const unit = formatUnit(format);
    const state: FormatState = {
      format,
      printer: new NumberPrinter(format),
      unit,
      calendar: unit === null ? null : new ZonedCalendar(format.timeZone),
      loadedAt: this.monotonic(),
      period: null,
      resolving: null,
      lastComputed: null,
      refreshing: false,
      superseded: false,
    };
    const previous = this.states.get(format.tag);
    if (previous) previous.superseded = true;
    this.states.set(format.tag, state);
    return state;
  }
}

function sameFormat(a: NumberFormat, b: NumberFormat): boolean {
  return (
    a.mode === b.mode &&
    a.prefix === b.prefix &&
    a.separator === b.separator &&
    a.datePattern === b.datePattern &&
    a.timeZone === b.timeZone &&
    a.width === b.width &&
    a.reset === b.reset
  );
}
