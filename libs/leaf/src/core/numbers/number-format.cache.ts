/**
 * The formats an instance serves, read from `leaf_number_format` on a tag's first call and
 * again in the background once `formatTtlMs` old; a tag without a format is remembered for
 * `missingFormatTtlMs`, so random tags cost one query each per period.
 */
import { assertValidKey } from '../arguments';
import { ExpiringKeys } from '../expiring-keys';
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
  /** Its `next()` takes one of the row's counters from memory (throws when there is none). */
  readonly generator: { next(): bigint } | null;
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

/** A format list that could not be read is read again after this long. */
const TAG_LIST_RETRY_MS = 1000;

/** Tags without a format the negative cache remembers at most. */
const MISSING_CACHE_SIZE = 10_000;
/** Reads of distinct tags' formats in flight at most; beyond, `NumberFormatNotFoundError` at once. */
const MAX_PENDING_LOADS = 256;

/** The cache of formats; see the file. */
export class NumberFormatCache {
  private readonly states = new Map<string, FormatState>();
  private readonly loading = new Map<string, Promise<FormatState>>();
  /**
   * Tags without a format, answered without a query until their deadline (monotonic): at most
   * {@link MISSING_CACHE_SIZE}, least recently used out first.
   */
  private readonly missing = new ExpiringKeys(MISSING_CACHE_SIZE);
  /** Every format's tag ({@link reservedBy}); `null` before the first read. */
  private formatTags: Set<string> | null = null;
  /** When {@link formatTags} was read (monotonic). */
  private formatTagsAt = Number.NEGATIVE_INFINITY;
  private readingTags: Promise<void> | null = null;

  constructor(
    private readonly formats: NumberFormatStore,
    private readonly monotonic: () => number,
    private readonly options: { readonly formatTtlMs: number; readonly missingFormatTtlMs: number },
  ) {}

  /**
   * The state of `tag`: the cached one (refreshed in the background once old), else read.
   * @throws {InvalidArgumentError} for a malformed tag (before any query).
   * @throws {NumberFormatNotFoundError} when the tag has no format.
   * @throws {AllocationError} when the table cannot be read.
   */
  state(tag: string): FormatState | Promise<FormatState> {
    const state = this.states.get(tag);
    if (state === undefined) return this.load(tag);
    this.touch(state, this.monotonic());
    return state;
  }

  /** The cached state of `tag`, or `undefined` (nothing read, nothing refreshed). */
  peek(tag: string): FormatState | undefined {
    return this.states.get(tag);
  }

  /** Refreshes `state` in the background once older than `formatTtlMs` at `now`. */
  touch(state: FormatState, now: number): void {
    if (!state.refreshing && now - state.loadedAt > this.options.formatTtlMs) this.refresh(state);
  }

  /**
   * The format tag that reserves `tag` for numbers: `tag` itself when it has a format, the
   * base tag when `tag` is one of its period counter rows (`orders:20261204`), else `null`.
   * From the list of every format's tag, read on the first call (the promise) and again in
   * the background once `formatTtlMs` old; a list that cannot be read reserves nothing
   * (IDs are not refused for a database hiccup) and is read again a second later.
   */
  reservedBy(tag: string): string | null | Promise<string | null> {
    const tags = this.formatTags;
    if (tags === null) return this.readTags().then(() => reservingTag(this.formatTags, tag));
    if (this.monotonic() - this.formatTagsAt > this.options.formatTtlMs) void this.readTags();
    return reservingTag(tags, tag);
  }

  private readTags(): Promise<void> {
    this.readingTags ??= this.formats
      .listFormats()
      .then(
        (formats) => {
          this.formatTags = new Set(formats.map((format) => format.tag));
          this.formatTagsAt = this.monotonic();
        },
        () => {
          this.formatTags ??= new Set();
          this.formatTagsAt = this.monotonic() - this.options.formatTtlMs + TAG_LIST_RETRY_MS;
        },
      )
      .finally(() => {
        this.readingTags = null;
      });
    return this.readingTags;
  }

  /** Takes `format` at once (defined or changed through this instance). */
  changed(format: NumberFormat): void {
    this.formatTags?.add(format.tag);
    this.missing.delete(format.tag);
    this.install(format);
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

  private async load(tag: string): Promise<FormatState> {
    // The cold path only: a malformed tag reaches neither the table nor a map.
    assertValidKey(tag);
    if (this.missing.has(tag, this.monotonic())) throw new NumberFormatNotFoundError(tag);
    const pending = this.loading.get(tag);
    if (pending) return pending;
    // Beyond this many distinct tags in flight, nobody waits in a queue of made-up tags.
    if (this.loading.size >= MAX_PENDING_LOADS) throw new NumberFormatNotFoundError(tag);
    const loading = this.formats
      .findFormat(tag)
      .then((format) => {
        if (format === null) {
          this.missing.add(tag, this.monotonic() + this.options.missingFormatTtlMs);
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

/** The digits of a period counter row's name (`orders:20261204`): 4, 6 or 8 after the last `:`. */
const PERIOD_DIGITS = /^(?:\d{4}|\d{6}|\d{8})$/;

/**
 * The format tag reserving `tag`: itself, or the base of a period counter row (the base tag,
 * `:` and 4, 6 or 8 digits). On every ID request: a tag without a `:` at the right place is
 * answered by the set lookup alone, no regular expression.
 */
function reservingTag(tags: ReadonlySet<string> | null, tag: string): string | null {
  if (tags === null || tags.size === 0) return null;
  if (tags.has(tag)) return tag;
  const colon = tag.lastIndexOf(':');
  const digits = tag.length - colon - 1;
  if (colon < 1 || (digits !== 4 && digits !== 6 && digits !== 8)) return null;
  if (!PERIOD_DIGITS.test(tag.slice(colon + 1))) return null;
  const base = tag.slice(0, colon);
  return tags.has(base) ? base : null;
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
