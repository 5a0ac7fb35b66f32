/**
 * A business-number format: what a tag's numbers look like (`ORD-20261204-000123`) and when
 * its counter restarts (docs/design.md, "Business numbers"). Pure definitions and checks; the
 * period math is `zoned-calendar.ts`, the issuing `business-number.issuer.ts`.
 */
import { assertValidKey, assertValidText } from '../arguments';
import { InvalidArgumentError } from '../errors/invalid-argument.error';

/** When a tag's counter restarts: never, or at the start of each day, month or year. */
export const NUMBER_RESETS = ['none', 'day', 'month', 'year'] as const;
/** One of {@link NUMBER_RESETS}. */
export type NumberReset = (typeof NUMBER_RESETS)[number];

/** The date parts a number may carry, in the format's time zone. */
export const NUMBER_DATE_PATTERNS = ['yyyyMMdd', 'yyyyMM', 'yyyy'] as const;
/** One of {@link NUMBER_DATE_PATTERNS}. */
export type NumberDatePattern = (typeof NUMBER_DATE_PATTERNS)[number];

/** The modes that serve business numbers (their counters are `leaf_alloc` rows). */
export const NUMBER_MODES = ['segment', 'sequence'] as const;
/** One of {@link NUMBER_MODES}. */
export type NumberMode = (typeof NUMBER_MODES)[number];

/** Separators allowed between the prefix, the date and the counter. */
export const NUMBER_SEPARATORS = ['', '-', '_', '.', '/'] as const;

/** The calendar units of the periods. */
export type CalendarUnit = 'day' | 'month' | 'year';

/** Widest counter: 19 digits hold every `max_id` (2^63 − 1). */
export const MAX_NUMBER_WIDTH = 19;
/** Longest prefix. */
export const MAX_NUMBER_PREFIX = 32;
/** Longest description. */
export const MAX_NUMBER_DESCRIPTION = 256;

const PREFIX_PATTERN = new RegExp(`^[A-Za-z0-9_./#-]{0,${MAX_NUMBER_PREFIX}}$`);
/** An IANA zone name's shape, 1..64 characters (`Asia/Shanghai`, `Etc/GMT+5`, `UTC`; no offset). */
const TIME_ZONE_NAME = /^[A-Za-z][A-Za-z0-9_+/-]{0,63}$/;
/** A tag ending like a period's counter row (`orders:20261204`) is not a format's tag. */
const COUNTER_TAG_PATTERN = /:(\d{4}|\d{6}|\d{8})$/;

/** Length of the period key of each unit (`yyyy`, `yyyyMM`, `yyyyMMdd`). */
export const KEY_LENGTH: Readonly<Record<CalendarUnit, number>> = { year: 4, month: 6, day: 8 };
/** The unit each date pattern shows. */
const PATTERN_UNIT: Readonly<Record<NumberDatePattern, CalendarUnit>> = {
  yyyyMMdd: 'day',
  yyyyMM: 'month',
  yyyy: 'year',
};

/** A tag's format as stored (`leaf_number_format`), defaults applied. */
export interface NumberFormat {
  /** The base tag: a `leaf_alloc` row whose `step` the period rows copy. */
  readonly tag: string;
  /** The mode that issues the counters: segment (per instance) or sequence (cluster-wide order). */
  readonly mode: NumberMode;
  readonly prefix: string;
  readonly separator: string;
  /** `null`: no date part. */
  readonly datePattern: NumberDatePattern | null;
  /** IANA time zone of the date part and of the periods, as `Intl` names it. */
  readonly timeZone: string;
  /** Digits of the counter, zero-padded. */
  readonly width: number;
  readonly reset: NumberReset;
  readonly description: string | null;
}

/** A format to define: only `tag` and `width` are required. */
export interface NewNumberFormat {
  readonly tag: string;
  /** @default 'segment' */
  readonly mode?: NumberMode;
  /** @default '' */
  readonly prefix?: string;
  /** Between prefix, date and counter (parts that are empty are left out). @default '-' */
  readonly separator?: string;
  /** @default null (no date part) */
  readonly datePattern?: NumberDatePattern | null;
  /** @default 'UTC' */
  readonly timeZone?: string;
  readonly width: number;
  /** @default the date pattern's unit (`yyyyMMdd`: day), or 'none' without a date part */
  readonly reset?: NumberReset;
  readonly description?: string | null;
}

/**
 * What may change on a format. Everything that decides the text of a number or which counter
 * it comes from is fixed once defined: changing it could print a number twice. `width` may
 * only grow (a number of another width is another text).
 */
export interface NumberFormatUpdate {
  readonly width?: number;
  readonly description?: string | null;
}

/** The unit of the period a format's numbers are tied to: its date part's, else its reset's. */
export function formatUnit(format: NumberFormat): CalendarUnit | null {
  if (format.datePattern !== null) return PATTERN_UNIT[format.datePattern];
  return format.reset === 'none' ? null : format.reset;
}

/**
 * The `leaf_alloc` row that counts the numbers of `format` dated `periodKey` (the date part's
 * key, `20261204`): `tag:<reset period>` (`orders:20261204`, `orders:202612`), one row per
 * period, so each period's counter starts at 1 once; the base tag itself without a reset.
 */
export function counterTag(format: NumberFormat, periodKey: string): string {
  if (format.reset === 'none') return format.tag;
  return `${format.tag}:${periodKey.slice(0, KEY_LENGTH[format.reset])}`;
}

/**
 * Checks a format to define and fills its defaults.
 * @throws {InvalidArgumentError} naming the first field that is wrong.
 */
export function checkNewNumberFormat(input: NewNumberFormat): NumberFormat {
  if (typeof input !== 'object' || input === null) {
    throw new InvalidArgumentError('a format must be an object', 'format');
  }
  assertValidKey(input.tag);
  if (COUNTER_TAG_PATTERN.test(input.tag)) {
    throw new InvalidArgumentError(
      'a format tag must not end in ":" and 4, 6 or 8 digits: those are the names of period counters',
      'tag',
    );
  }
  const mode = input.mode ?? 'segment';
  if (!NUMBER_MODES.includes(mode)) {
    throw new InvalidArgumentError(`mode must be one of ${NUMBER_MODES.join(', ')}`, 'mode');
  }
  const prefix = input.prefix ?? '';
  if (typeof prefix !== 'string' || !PREFIX_PATTERN.test(prefix)) {
    throw new InvalidArgumentError(
      `prefix must be at most ${MAX_NUMBER_PREFIX} characters of letters, digits, "_", "-", ".", "/" or "#"`,
      'prefix',
    );
  }
  const separator = input.separator ?? '-';
  if (!(NUMBER_SEPARATORS as readonly unknown[]).includes(separator)) {
    throw new InvalidArgumentError(
      'separator must be empty or one of "-", "_", ".", "/"',
      'separator',
    );
  }
  const datePattern = input.datePattern ?? null;
  if (datePattern !== null && !NUMBER_DATE_PATTERNS.includes(datePattern)) {
    throw new InvalidArgumentError(
      `datePattern must be one of ${NUMBER_DATE_PATTERNS.join(', ')}, or none`,
      'datePattern',
    );
  }
  const timeZone = canonicalTimeZone(input.timeZone ?? 'UTC');
  assertValidWidth(input.width);
  const reset = input.reset ?? (datePattern === null ? 'none' : PATTERN_UNIT[datePattern]);
  if (!NUMBER_RESETS.includes(reset)) {
    throw new InvalidArgumentError(`reset must be one of ${NUMBER_RESETS.join(', ')}`, 'reset');
  }
  if (reset !== 'none') {
    // The date part must name the period, or two periods would print the same numbers.
    if (datePattern === null || KEY_LENGTH[PATTERN_UNIT[datePattern]] < KEY_LENGTH[reset]) {
      throw new InvalidArgumentError(
        `reset "${reset}" needs a date part that shows the ${reset} (${reset === 'day' ? 'yyyyMMdd' : reset === 'month' ? 'yyyyMM or yyyyMMdd' : 'any pattern'})`,
        'datePattern',
      );
    }
    if (input.tag.length + 1 + KEY_LENGTH[reset] > 128) {
      throw new InvalidArgumentError(
        `tag is too long for its period counters ("${input.tag}:" and ${KEY_LENGTH[reset]} digits must fit in 128 characters)`,
        'tag',
      );
    }
  }
  return {
    tag: input.tag,
    mode,
    prefix,
    separator,
    datePattern,
    timeZone,
    width: input.width,
    reset,
    description: checkDescription(input.description),
  };
}

/**
 * Checks a change to `current`.
 * @throws {InvalidArgumentError} for an empty change, a width that shrinks or is out of range,
 *   or a malformed description.
 */
export function checkNumberFormatUpdate(
  current: NumberFormat,
  update: NumberFormatUpdate,
): NumberFormat {
  if (update.width === undefined && update.description === undefined) {
    throw new InvalidArgumentError('nothing to change: give width and/or description', 'width');
  }
  if (update.width !== undefined) {
    assertValidWidth(update.width);
    if (update.width < current.width) throw widthShrinkError(current.width);
  }
  return {
    ...current,
    width: update.width ?? current.width,
    description:
      update.description !== undefined ? checkDescription(update.description) : current.description,
  };
}

/** The error of a change that would shrink a format's `width` (now `width`). */
export function widthShrinkError(width: number): InvalidArgumentError {
  return new InvalidArgumentError(
    `width may only grow (now ${width}): numbers already issued keep theirs`,
    'width',
  );
}

/**
 * The canonical name of an IANA time zone (`utc` → `UTC`). Names only: `Intl` also takes
 * offsets (`+05:00`), which have no daylight-saving rules and are refused, as is anything
 * not shaped like a zone name (letters first, then letters, digits, `/`, `_`, `+`, `-`).
 * @throws {InvalidArgumentError} when it is not such a name or `Intl` does not know it.
 */
export function canonicalTimeZone(timeZone: unknown): string {
  if (typeof timeZone !== 'string' || !TIME_ZONE_NAME.test(timeZone)) {
    throw new InvalidArgumentError(
      'timeZone must be an IANA time zone name (e.g. "Asia/Shanghai"), not an offset',
      'timeZone',
    );
  }
  try {
    return new Intl.DateTimeFormat('en-US', { timeZone }).resolvedOptions().timeZone;
  } catch {
    throw new InvalidArgumentError(
      `timeZone "${timeZone}" is not an IANA time zone this runtime knows`,
      'timeZone',
    );
  }
}

/** @throws {InvalidArgumentError} unless `width` is an integer in 1..{@link MAX_NUMBER_WIDTH} (gapless series' too). */
export function assertValidWidth(width: unknown): asserts width is number {
  if (!Number.isInteger(width) || (width as number) < 1 || (width as number) > MAX_NUMBER_WIDTH)
    throw new InvalidArgumentError(`width must be an integer in 1..${MAX_NUMBER_WIDTH}`, 'width');
}

function checkDescription(description: unknown): string | null {
  if (description === undefined || description === null) return null;
  assertValidText(description, 'description', MAX_NUMBER_DESCRIPTION);
  return description;
}
