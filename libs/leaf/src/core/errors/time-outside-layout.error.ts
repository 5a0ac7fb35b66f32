import { LeafError, LeafErrorCode } from './leaf.error';

/** `ms` in ISO 8601, or `?` past the range a Date holds (±8.64e15 ms). */
const iso = (ms: number) => (Math.abs(ms) <= 8.64e15 ? new Date(ms).toISOString() : '?');

/**
 * A time asked for IDs (the bounds of an instant or interval, docs/snowflake.md, "IDs for a
 * time") is before the snowflake epoch: no ID of the layout has it.
 */
export class TimeBeforeEpochError extends LeafError {
  readonly code = LeafErrorCode.TIME_BEFORE_EPOCH;

  constructor(
    /** The time asked for, ms since the Unix epoch. */
    readonly timestamp: number,
    /** The layout's epoch, ms since the Unix epoch. */
    readonly epoch: number,
  ) {
    super(`time ${timestamp} is before the snowflake epoch ${epoch} (${iso(epoch)}): no ID has it`);
  }
}

/**
 * A time asked for IDs is after the last millisecond the snowflake layout's timestamp field
 * encodes (or, beyond it, UUIDv7's 48-bit field).
 */
export class TimeBeyondLayoutError extends LeafError {
  readonly code = LeafErrorCode.TIME_BEYOND_LAYOUT;

  constructor(
    /** The time asked for, ms since the Unix epoch. */
    readonly timestamp: number,
    /** The last millisecond IDs can have, ms since the Unix epoch. */
    readonly maxTimestamp: number,
  ) {
    super(
      `time ${timestamp} is after ${maxTimestamp} (${iso(maxTimestamp)}), the last millisecond of the snowflake layout`,
    );
  }
}
