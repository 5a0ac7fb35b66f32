/**
 * A gapless series (docs/design.md, "Gapless numbers"): its name, how its numbers print, when its
 * counter restarts, and the legal metadata some countries ask for. Checked here, before
 * anything reaches a database.
 */
import { assertValidKey, assertValidText } from '../arguments';
import { GaplessSeriesNotFoundError } from '../errors/gapless.error';
import { InvalidArgumentError } from '../errors/invalid-argument.error';
import { assertValidWidth } from '../numbers/number-format';
import { ZonedCalendar } from '../numbers/zoned-calendar';
import type { GaplessStore } from './gapless-store.port';

/** When a series' counter restarts at 1: never, each year, each month. */
export const GAPLESS_PERIODS = ['none', 'year', 'month'] as const;

/** One of {@link GAPLESS_PERIODS}. */
export type GaplessPeriod = (typeof GAPLESS_PERIODS)[number];

/** Longest prefix of a series' numbers. */
const MAX_PREFIX = 32;
/** Longest external code (Portugal's ATCUD validation code is 8+ characters). */
const MAX_EXTERNAL_CODE = 64;

/** A series as stored. */
export interface GaplessSeries {
  /** 1-128 characters of letters, digits, `_ - . :` (as tags). */
  readonly name: string;
  /** Printed before the period and the counter (`FT A`, `INV`); may be empty. */
  readonly prefix: string;
  /** Digits of the counter, zero-padded (1..19). */
  readonly width: number;
  readonly period: GaplessPeriod;
  /** The IANA time zone whose calendar decides the period. */
  readonly timeZone: string;
  /** A code the tax authority gave the series before use (Portugal's ATCUD), or `null`. */
  readonly externalCode: string | null;
  /** The series whose documents this one corrects (Spain's rectifying invoices), or `null`. */
  readonly correctionsOf: string | null;
  /** When it was created, epoch ms of the database's clock. */
  readonly createdAt: number;
}

/** What a caller gives to create a series. */
export interface NewGaplessSeries {
  name: string;
  /** @default '' */
  prefix?: string;
  /** @default 6 */
  width?: number;
  /** `day` is refused (see {@link checkNewGaplessSeries}). @default 'none' */
  period?: GaplessPeriod;
  /** @default 'UTC' */
  timeZone?: string;
  /** @default null */
  externalCode?: string | null;
  /** @default null */
  correctionsOf?: string | null;
}

/**
 * A new series checked and completed with its defaults (`createdAt` is the store's).
 * @throws {InvalidArgumentError} naming the first field that is wrong; a `day` period with
 *   the reason it is refused.
 */
export function checkNewGaplessSeries(raw: NewGaplessSeries): Omit<GaplessSeries, 'createdAt'> {
  assertValidKey(raw.name);
  const prefix = raw.prefix ?? '';
  assertValidText(prefix, 'prefix', MAX_PREFIX);
  const width = raw.width ?? 6;
  assertValidWidth(width);
  const period = raw.period ?? 'none';
  if ((period as string) === 'day')
    throw new InvalidArgumentError(
      'period "day" is refused for gapless series: a counter that restarts each day makes the date part of the number, which tax authorities refuse (Italy: Agenzia Entrate, Risposta 505/2020); use "year", "month" or "none" (docs/gapless.md)',
      'period',
    );
  if (!(GAPLESS_PERIODS as readonly string[]).includes(period))
    throw new InvalidArgumentError(`period must be one of ${GAPLESS_PERIODS.join(', ')}`, 'period');
  const timeZone = raw.timeZone ?? 'UTC';
  assertValidText(timeZone, 'timeZone', 64);
  try {
    new ZonedCalendar(timeZone);
  } catch {
    throw new InvalidArgumentError(`timeZone "${timeZone}" is not an IANA time zone`, 'timeZone');
  }
  const externalCode = raw.externalCode ?? null;
  if (externalCode !== null) assertValidText(externalCode, 'externalCode', MAX_EXTERNAL_CODE);
  const correctionsOf = raw.correctionsOf ?? null;
  if (correctionsOf !== null) {
    assertValidKey(correctionsOf);
    if (correctionsOf === raw.name)
      throw new InvalidArgumentError('a series cannot correct itself', 'correctionsOf');
  }
  return { name: raw.name, prefix, width, period, timeZone, externalCode, correctionsOf };
}

/**
 * Checks `raw` and stores it (a `correctionsOf` series must exist first).
 * @throws {InvalidArgumentError} as {@link checkNewGaplessSeries}.
 * @throws {GaplessSeriesExistsError}, {@link GaplessSeriesNotFoundError} (`correctionsOf`).
 */
export async function createGaplessSeries(store: GaplessStore, raw: NewGaplessSeries) {
  const checked = checkNewGaplessSeries(raw);
  if (checked.correctionsOf !== null) await existingGaplessSeries(store, checked.correctionsOf);
  return store.createSeries(checked);
}

/** The series `name`. @throws {GaplessSeriesNotFoundError} for an unknown one. */
export async function existingGaplessSeries(store: GaplessStore, name: string) {
  const series = await store.findSeries(name);
  if (series === null) throw new GaplessSeriesNotFoundError(name);
  return series;
}

/**
 * The period keys and printed numbers of one series. Keeps its calendar (costly to build).
 */
export class GaplessSeriesCalendar {
  private readonly calendar: ZonedCalendar;

  constructor(readonly series: GaplessSeries) {
    this.calendar = new ZonedCalendar(series.timeZone);
  }

  /** The key of the period holding the instant `ms` (`''`, `2026`, `202612`). */
  periodKey(ms: number): string {
    const { period } = this.series;
    return period === 'none' ? '' : this.calendar.key(ms, period);
  }

  /**
   * `prefix`, the period and the counter zero-padded to `width`, joined by `-` (empty parts
   * left out): `INV-2026-000123`.
   */
  text(periodKey: string, number: bigint): string {
    const counter = number.toString().padStart(this.series.width, '0');
    return [this.series.prefix, periodKey, counter].filter((part) => part !== '').join('-');
  }
}
