import { InvalidArgumentError } from '../errors/invalid-argument.error';

/** Bits of the millisecond field. */
export const SNOWFLAKE_TIMESTAMP_BITS = 41;
/** Bits of the worker ID field. */
export const SNOWFLAKE_WORKER_ID_BITS = 10;
/** Bits of the sequence field. */
export const SNOWFLAKE_SEQUENCE_BITS = 12;
/** Largest sequence within one millisecond (4095). */
export const SNOWFLAKE_MAX_SEQUENCE = 2 ** SNOWFLAKE_SEQUENCE_BITS - 1;
/** Largest worker ID (1023). */
export const SNOWFLAKE_MAX_WORKER_ID = 2 ** SNOWFLAKE_WORKER_ID_BITS - 1;
/** Largest value of the millisecond field, `2^41 - 1` (about 69.7 years). */
export const SNOWFLAKE_MAX_TIMESTAMP_DELTA = 2 ** SNOWFLAKE_TIMESTAMP_BITS - 1;
/** Largest ID, `2^63 - 1` (the sign bit stays 0). */
export const SNOWFLAKE_MAX_ID = 2n ** 63n - 1n;

const WORKER_SHIFT = SNOWFLAKE_SEQUENCE_BITS;
const TIMESTAMP_SHIFT = BigInt(SNOWFLAKE_SEQUENCE_BITS + SNOWFLAKE_WORKER_ID_BITS);
const DECIMAL = /^[0-9]{1,19}$/;

/**
 * The 4,096 sequence values as bigints, made once: `base + SEQUENCES[n]` is one bigint
 * addition, where `BigInt(n)` per ID would cost a conversion on the hot path. Frozen, so
 * sharing it between generators (and applications) shares no mutable state.
 */
export const SNOWFLAKE_SEQUENCES: readonly bigint[] = Object.freeze(
  Array.from({ length: SNOWFLAKE_MAX_SEQUENCE + 1 }, (_, n) => BigInt(n)),
);

/** The fields of a snowflake ID. */
export interface DecodedSnowflakeId {
  /** The ID itself. */
  readonly id: bigint;
  /** Milliseconds since the Unix epoch (the field plus the configured epoch). */
  readonly timestamp: number;
  /** `timestamp` as a Date. */
  readonly date: Date;
  /** Worker ID, 0-1023. */
  readonly workerId: number;
  /** Sequence within the millisecond, 0-4095. */
  readonly sequence: number;
}

/** Leaf's default epoch: 2010-11-04T01:42:54.657Z (Twitter's snowflake epoch). */
export const DEFAULT_SNOWFLAKE_EPOCH = 1288834974657;

/**
 * Leaf's 64-bit layout: `((timestamp - epoch) << 22) | (workerId << 12) | sequence`,
 * 1 sign bit (0), 41 bits of ms since `epoch`, 10 bits worker ID, 12 bits sequence.
 * IDs pass 2^53, so they are bigint throughout.
 */
export class SnowflakeLayout {
  /** Last millisecond (Unix time) that still fits the 41-bit field. */
  readonly maxTimestamp: number;

  constructor(
    /** Start of the millisecond field, ms since the Unix epoch. @default 1288834974657 in the module options */
    readonly epoch: number,
  ) {
    if (!Number.isSafeInteger(epoch) || epoch < 0) {
      throw new InvalidArgumentError(
        `epoch must be a non-negative integer (got ${epoch})`,
        'epoch',
      );
    }
    this.maxTimestamp = epoch + SNOWFLAKE_MAX_TIMESTAMP_DELTA;
  }

  /** True when `timestamp` (Unix ms) can be encoded: `epoch <= timestamp <= maxTimestamp`. */
  fits(timestamp: number): boolean {
    return timestamp >= this.epoch && timestamp <= this.maxTimestamp;
  }

  /**
   * The ID with sequence 0 of `timestamp` and `workerId`; add a sequence to it. Callers
   * check the ranges (the generator does, once per millisecond).
   */
  base(timestamp: number, workerId: number): bigint {
    return (BigInt(timestamp - this.epoch) << TIMESTAMP_SHIFT) | BigInt(workerId << WORKER_SHIFT);
  }

  /**
   * Builds an ID from its fields.
   * @throws {InvalidArgumentError} when a field is out of range.
   */
  compose(timestamp: number, workerId: number, sequence: number): bigint {
    if (!Number.isInteger(timestamp) || !this.fits(timestamp)) {
      throw new InvalidArgumentError(
        `timestamp must be an integer in ${this.epoch}..${this.maxTimestamp} (got ${timestamp})`,
        'timestamp',
      );
    }
    if (!Number.isInteger(workerId) || workerId < 0 || workerId > SNOWFLAKE_MAX_WORKER_ID) {
      throw new InvalidArgumentError(
        `workerId must be an integer in 0..${SNOWFLAKE_MAX_WORKER_ID}`,
        'workerId',
      );
    }
    if (!Number.isInteger(sequence) || sequence < 0 || sequence > SNOWFLAKE_MAX_SEQUENCE) {
      throw new InvalidArgumentError(
        `sequence must be an integer in 0..${SNOWFLAKE_MAX_SEQUENCE}`,
        'sequence',
      );
    }
    return this.base(timestamp, workerId) + SNOWFLAKE_SEQUENCES[sequence]!;
  }

  /**
   * Splits an ID into its fields, using this layout's epoch. Accepts a bigint or its
   * decimal string (as IDs travel on the wire).
   * @throws {InvalidArgumentError} for a non-decimal string, a negative ID or one above 2^63-1.
   */
  decode(id: bigint | string): DecodedSnowflakeId {
    let value: bigint;
    if (typeof id === 'bigint') {
      value = id;
    } else if (typeof id === 'string' && DECIMAL.test(id)) {
      value = BigInt(id);
    } else {
      throw new InvalidArgumentError(
        'id must be a decimal integer in 0..9223372036854775807',
        'id',
      );
    }
    if (value < 0n || value > SNOWFLAKE_MAX_ID) {
      throw new InvalidArgumentError(
        'id must be a decimal integer in 0..9223372036854775807',
        'id',
      );
    }
    const timestamp = Number(value >> TIMESTAMP_SHIFT) + this.epoch;
    return {
      id: value,
      timestamp,
      date: new Date(timestamp),
      workerId: Number((value >> BigInt(WORKER_SHIFT)) & BigInt(SNOWFLAKE_MAX_WORKER_ID)),
      sequence: Number(value & BigInt(SNOWFLAKE_MAX_SEQUENCE)),
    };
  }
}
