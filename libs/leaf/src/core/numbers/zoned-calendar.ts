/**
 * Calendar periods (day, month, year) of an IANA time zone, from `Intl` alone: no database
 * time-zone tables. A period is identified by its key (`20261204`, `202612`, `2026`) and runs
 * from the first instant whose local date falls in it to the first instant whose local date
 * falls in the next one, so a day whose midnight a DST change skips (it starts at 01:00)
 * and a 23- or 25-hour day come out right.
 */
import { KEY_LENGTH, type CalendarUnit } from './number-format';

/** A calendar period in a time zone: its key and its bounds in epoch milliseconds, `[start, end)`. */
export interface CalendarPeriod {
  readonly key: string;
  readonly start: number;
  readonly end: number;
}

/** A local date. */
interface LocalDate {
  readonly year: number;
  readonly month: number;
  readonly day: number;
}

const HOUR_MS = 3_600_000;
/** Farther than any zone's offset from UTC (historic offsets reach about ±15 h). */
const SEARCH_MS = 27 * HOUR_MS;

/**
 * The calendar of one time zone. Keeps its `Intl.DateTimeFormat` (costly to build); the
 * period math runs only when a period is looked up, never per number.
 */
export class ZonedCalendar {
  private readonly format: Intl.DateTimeFormat;

  /** @throws {RangeError} when `Intl` does not know `timeZone`. */
  constructor(readonly timeZone: string) {
    this.format = new Intl.DateTimeFormat('en-US', {
      timeZone,
      calendar: 'gregory',
      numberingSystem: 'latn',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
    });
  }

  /**
   * The key of the period of `unit` that holds the instant `ms` (`20261204`, `202612`, `2026`).
   * @throws {RangeError} for a year outside 1000..9999.
   */
  key(ms: number, unit: CalendarUnit): string {
    return keyOf(this.date(ms), unit);
  }

  /**
   * The period of `unit` that holds the instant `ms`, with its bounds.
   * @throws {RangeError} for a year outside 1000..9999.
   */
  period(ms: number, unit: CalendarUnit): CalendarPeriod {
    const date = this.date(ms);
    return this.periodFrom(keyOf(date, unit), firstDate(date, unit), unit);
  }

  /**
   * The period of `unit` named `key` (as {@link key} prints it), with its bounds.
   * @throws {RangeError} for a key that names no period of `unit`.
   */
  periodOf(key: string, unit: CalendarUnit): CalendarPeriod {
    return this.periodFrom(key, parseKey(key, unit), unit);
  }

  /** The period `key` of `unit` whose first local date is `first`. */
  private periodFrom(key: string, first: LocalDate, unit: CalendarUnit): CalendarPeriod {
    return { key, start: this.firstInstant(first), end: this.firstInstant(nextDate(first, unit)) };
  }

  /** The local date of the instant `ms`. */
  private date(ms: number): LocalDate {
    const date = { year: 0, month: 0, day: 0 };
    for (const { type, value } of this.format.formatToParts(ms))
      if (type === 'year' || type === 'month' || type === 'day') date[type] = Number(value);
    return date;
  }

  /**
   * The first instant whose local date is `date` or later: a binary search to the
   * millisecond between two instants a day and more on either side of its UTC midnight.
   */
  private firstInstant(date: LocalDate): number {
    const target = ordinal(date);
    const midnight = Date.UTC(date.year, date.month - 1, date.day);
    let before = midnight - SEARCH_MS;
    let after = midnight + SEARCH_MS;
    while (after - before > 1) {
      const middle = before + Math.floor((after - before) / 2);
      if (ordinal(this.date(middle)) >= target) after = middle;
      else before = middle;
    }
    return after;
  }
}

function ordinal({ year, month, day }: LocalDate): number {
  return year * 10_000 + month * 100 + day;
}

function keyOf(date: LocalDate, unit: CalendarUnit): string {
  if (!(date.year >= 1000 && date.year <= 9999)) {
    throw new RangeError(`year ${date.year} is outside 1000..9999`);
  }
  const yyyy = String(date.year);
  if (unit === 'year') return yyyy;
  const mm = String(date.month).padStart(2, '0');
  if (unit === 'month') return yyyy + mm;
  return yyyy + mm + String(date.day).padStart(2, '0');
}

function parseKey(key: string, unit: CalendarUnit): LocalDate {
  if (key.length !== KEY_LENGTH[unit] || !/^\d+$/.test(key)) {
    throw new RangeError(`"${key}" is not a ${unit} key`);
  }
  const date = {
    year: Number(key.slice(0, 4)),
    month: unit === 'year' ? 1 : Number(key.slice(4, 6)),
    day: unit === 'day' ? Number(key.slice(6, 8)) : 1,
  };
  const check = new Date(Date.UTC(date.year, date.month - 1, date.day));
  if (
    date.year < 1000 ||
    check.getUTCFullYear() !== date.year ||
    check.getUTCMonth() !== date.month - 1 ||
    check.getUTCDate() !== date.day
  ) {
    throw new RangeError(`"${key}" is not a ${unit} key`);
  }
  return date;
}

/** The first local date of the period of `unit` holding `date`. */
function firstDate({ year, month, day }: LocalDate, unit: CalendarUnit): LocalDate {
  return { year, month: unit === 'year' ? 1 : month, day: unit === 'day' ? day : 1 };
}

/** The first local date of the period after the one of `unit` starting on `first`. */
function nextDate(first: LocalDate, unit: CalendarUnit): LocalDate {
  const next = new Date(
    Date.UTC(
      first.year + (unit === 'year' ? 1 : 0),
      first.month - 1 + (unit === 'month' ? 1 : 0),
      first.day + (unit === 'day' ? 1 : 0),
    ),
  );
  return { year: next.getUTCFullYear(), month: next.getUTCMonth() + 1, day: next.getUTCDate() };
}
