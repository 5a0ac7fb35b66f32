/**
 * IDs for a given time (docs/snowflake.md, "IDs for a time"): the smallest and largest
 * snowflake ID, and UUIDv7, whose timestamp lies in an interval, so that "rows created between
 * t1 and t2" is a range scan of the primary key. Pure functions.
 */
import { InvalidArgumentError } from '../errors/invalid-argument.error';
import { TimeBeforeEpochError, TimeBeyondLayoutError } from '../errors/time-outside-layout.error';
import type { SnowflakeLayout } from './snowflake-layout';

/** The last millisecond of UUIDv7's 48-bit `unix_ts_ms` (year 10889). */
const UUID_V7_MAX_TIMESTAMP = 2 ** 48 - 1;

/** The IDs of an interval of time, both ends inclusive. */
export interface SnowflakeTimeBounds {
  /** The interval's first millisecond, ms since the Unix epoch. */
  readonly from: number;
  /** Its last millisecond (inclusive). */
  readonly to: number;
  /** The smallest snowflake ID of `from`: data-centre, worker and sequence bits all 0. */
  readonly min: bigint;
  /** The largest snowflake ID of `to`: data-centre, worker and sequence bits all 1. */
  readonly max: bigint;
  /** The smallest UUIDv7 of `from`: `<unix_ts_ms>-7000-8000-000000000000`. */
  readonly uuidMin: string;
  /** The largest UUIDv7 of `to`: `<unix_ts_ms>-7fff-bfff-ffffffffffff`. */
  readonly uuidMax: string;
}

/** An end of an interval as ms since the Unix epoch. @throws {InvalidArgumentError} */
function instant(value: unknown, argument: 'from' | 'to'): number {
  const ms = value instanceof Date ? value.getTime() : value;
  if (typeof ms !== 'number' || !Number.isSafeInteger(ms)) {
    throw new InvalidArgumentError(
      `${argument} must be a Date or an integer number of ms since the Unix epoch`,
      argument,
    );
  }
  return ms;
}

/**
 * `[from, to]` as ms since the Unix epoch; `to` defaults to `from` (one instant). What every
 * caller checks before a layout is known (the remote client, before its request).
 * @throws {InvalidArgumentError} for an end that is neither a valid Date nor a safe integer
 *   (`argument` `from` or `to`), or `from` after `to` (`to`).
 */
export function timeInterval(from: number | Date, to: number | Date = from): [number, number] {
  const start = instant(from, 'from');
  const end = instant(to, 'to');
  if (start > end) {
    throw new InvalidArgumentError(`from (${start}) must not be after to (${end})`, 'to');
  }
  return [start, end];
}

/** The first 14 characters of a UUIDv7 of millisecond `ms`: `xxxxxxxx-xxxx-`. */
function uuidTime(ms: number): string {
  const hex = ms.toString(16).padStart(12, '0');
  return `${hex.slice(0, 8)}-${hex.slice(8)}-`;
}

/**
 * The smallest and largest ID of `layout` whose timestamp is in `[from, to]` (ms, inclusive;
 * `to` defaults to `from`): every row whose snowflake ID has such a timestamp, whichever data
 * centre and worker issued it, has `min <= id <= max`, and no other row does. The UUIDv7
 * bounds hold for every UUIDv7 of those milliseconds, ours (made from the IDs, docs/formats.md)
 * and any other, in text and byte order. For a half-open `[t1, t2)`, pass `t2 - 1`.
 *
 * ```ts
 * const { min, max } = snowflakeTimeBounds(layout, Date.parse('2026-03-01'), Date.parse('2026-04-01') - 1);
 * // SELECT … WHERE id BETWEEN min AND max
 * ```
 * @throws {InvalidArgumentError} as {@link timeInterval}.
 * @throws {TimeBeforeEpochError} when an end is before the layout's epoch.
 * @throws {TimeBeyondLayoutError} when an end is after the layout's last millisecond.
 */
export function snowflakeTimeBounds(
  layout: SnowflakeLayout,
  from: number | Date,
  to: number | Date = from,
): SnowflakeTimeBounds {
  const [start, end] = timeInterval(from, to);
  const last = Math.min(layout.maxTimestamp, UUID_V7_MAX_TIMESTAMP);
  for (const ms of [start, end]) {
    if (ms < layout.epoch) throw new TimeBeforeEpochError(ms, layout.epoch);
    if (ms > last) throw new TimeBeyondLayoutError(ms, last);
  }
  const { dataCenterBits, workerBits, sequenceBits } = layout.spec;
  const shift = BigInt(dataCenterBits + workerBits + sequenceBits);
  return {
    from: start,
    to: end,
    min: BigInt(start - layout.epoch) << shift,
    max: ((BigInt(end - layout.epoch) + 1n) << shift) - 1n,
    uuidMin: `${uuidTime(start)}7000-8000-000000000000`,
    uuidMax: `${uuidTime(end)}7fff-bfff-ffffffffffff`,
  };
}
