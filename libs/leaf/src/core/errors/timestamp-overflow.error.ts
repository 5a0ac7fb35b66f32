import { LeafError, LeafErrorCode } from './leaf.error';

/**
 * The current time no longer fits the 41-bit millisecond field counted from the configured
 * epoch (about 69.7 years after it). Nothing was issued; waiting does not help.
 */
export class TimestampOverflowError extends LeafError {
  readonly code = LeafErrorCode.TIMESTAMP_OVERFLOW;

  constructor(
    /** The clock reading, ms since the Unix epoch. */
    readonly timestamp: number,
    /** The configured snowflake epoch. */
    readonly epoch: number,
  ) {
    super(
      `Timestamp ${timestamp} is ${timestamp - epoch} ms after the snowflake epoch ${epoch}, beyond the 41-bit field (2^41-1 ms); this layout cannot issue more IDs`,
    );
  }
}
