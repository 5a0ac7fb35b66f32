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
  /** Data-centre ID (0 in layouts without data-centre bits). */
  readonly dataCenterId: number;
  /** Worker ID within the data centre (Leaf's layout: the whole 10-bit field, 0-1023). */
  readonly workerId: number;
  /** Sequence within the millisecond (Leaf's layout: 0-4095). */
  readonly sequence: number;
}

/** Leaf's default epoch: 2010-11-04T01:42:54.657Z (Twitter's snowflake epoch). */
export const DEFAULT_SNOWFLAKE_EPOCH = 1288834974657;

/**
 * How the bits of an ID are split, most significant first after the sign bit:
 * `timestamp | dataCenter | worker | sequence` (docs/operations.md, "Snowflake layouts").
 */
export interface SnowflakeLayoutSpec {
  readonly timestampBits: number;
  /** Bits of the data-centre ID, taken from the worker field (0: none). */
  readonly dataCenterBits: number;
  readonly workerBits: number;
  readonly sequenceBits: number;
}

/** Leaf's 64-bit layout: 41 bits of ms, 10 bits worker ID, 12 bits sequence. */
export const LEAF_LAYOUT: SnowflakeLayoutSpec = Object.freeze({
  timestampBits: SNOWFLAKE_TIMESTAMP_BITS,
  dataCenterBits: 0,
  workerBits: SNOWFLAKE_WORKER_ID_BITS,
  sequenceBits: SNOWFLAKE_SEQUENCE_BITS,
});

/**
 * A layout whose IDs stay at or below `2^53 - 1` (`Number.MAX_SAFE_INTEGER`), for clients
 * that parse IDs as a JavaScript `number`: 40 bits of ms (34.8 years from the epoch), 7 bits
 * worker ID (128 workers), 6 bits sequence (64 IDs per ms and worker).
 */
export const JS_SAFE_LAYOUT: SnowflakeLayoutSpec = Object.freeze({
  timestampBits: 40,
  dataCenterBits: 0,
  workerBits: 7,
  sequenceBits: 6,
});

/** The epoch the JavaScript-safe layout uses unless one is configured: 2025-01-01T00:00:00Z (IDs fit until 2059-11). */
export const JS_SAFE_EPOCH = 1735689600000;

/** The named layouts. */
export const SNOWFLAKE_LAYOUTS = Object.freeze({ leaf: LEAF_LAYOUT, 'js-safe': JS_SAFE_LAYOUT });

/** A named layout. */
export type SnowflakeLayoutName = keyof typeof SNOWFLAKE_LAYOUTS;

/**
 * Checks a bit split: every field a non-negative integer, timestamp, worker and sequence at
 * least 1 bit, at most 63 bits in all (the sign bit stays 0), data-centre and worker bits
 * within Leaf's 10-bit worker field and at most Leaf's 12 sequence bits.
 * @returns the problems found (empty when valid).
 */
export function layoutProblems(spec: SnowflakeLayoutSpec, dataCenterId = 0): string[] {
  const problems: string[] = [];
  const fields = ['timestampBits', 'dataCenterBits', 'workerBits', 'sequenceBits'] as const;
  for (const field of fields) {
    const value = spec[field];
    const min = field === 'dataCenterBits' ? 0 : 1;
    if (!Number.isInteger(value) || value < min)
      problems.push(`layout.${field} must be an integer ≥ ${min} (got ${String(value)})`);
  }
  if (problems.length > 0) return problems;
  const total = spec.timestampBits + spec.dataCenterBits + spec.workerBits + spec.sequenceBits;
  if (total > 63)
    problems.push(`the layout's bits add up to ${total}; at most 63 fit a signed 64-bit ID`);
  if (spec.dataCenterBits + spec.workerBits > SNOWFLAKE_WORKER_ID_BITS)
    problems.push(
      `data-centre and worker bits add up to ${spec.dataCenterBits + spec.workerBits}; the worker field has at most ${SNOWFLAKE_WORKER_ID_BITS}`,
    );
  if (spec.sequenceBits > SNOWFLAKE_SEQUENCE_BITS)
    problems.push(`layout.sequenceBits must be at most ${SNOWFLAKE_SEQUENCE_BITS}`);
  const maxDc = 2 ** spec.dataCenterBits - 1;
  if (!Number.isInteger(dataCenterId) || dataCenterId < 0 || dataCenterId > maxDc)
    problems.push(`dataCenterId must be an integer in 0..${maxDc} (got ${String(dataCenterId)})`);
  return problems;
}

/**
 * The bit layout of snowflake IDs: `((timestamp - epoch) << (dc + worker + sequence bits)) |
 * (dataCenterId << (worker + sequence bits)) | (workerId << sequence bits) | sequence`.
 * Leaf's layout (the default) is 1 sign bit (0), 41 bits of ms since `epoch`, 10 bits worker
 * ID, 12 bits sequence; IDs pass 2^53, so they are bigint throughout. Other splits: the
 * JavaScript-safe one ({@link JS_SAFE_LAYOUT}) and data-centre bits taken from the worker
 * field (docs/operations.md, "Snowflake layouts").
 */
export class SnowflakeLayout {
  /** Last millisecond (Unix time) that still fits the timestamp field. */
  readonly maxTimestamp: number;
  /** Largest worker ID (within the data centre). */
  readonly maxWorkerId: number;
  /** Largest sequence within one millisecond. */
  readonly maxSequence: number;
  /** Largest ID this layout can produce. */
  readonly maxId: bigint;
  private readonly timestampShift: bigint;
  private readonly sequenceBits: number;
  private readonly dataCenterPart: number;

  constructor(
    /** Start of the millisecond field, ms since the Unix epoch. @default 1288834974657 in the module options */
    readonly epoch: number,
    /** The bit split. @default Leaf's */
    readonly spec: SnowflakeLayoutSpec = LEAF_LAYOUT,
    /** The data-centre ID encoded in every ID (with data-centre bits). */
    readonly dataCenterId = 0,
  ) {
    if (!Number.isSafeInteger(epoch) || epoch < 0) {
      throw new InvalidArgumentError(
        `epoch must be a non-negative integer (got ${epoch})`,
        'epoch',
      );
    }
    const problems = layoutProblems(spec, dataCenterId);
    if (problems.length > 0) throw new InvalidArgumentError(problems.join('; '), 'layout');
    const below = spec.dataCenterBits + spec.workerBits + spec.sequenceBits;
    this.maxTimestamp = epoch + 2 ** spec.timestampBits - 1;
    this.maxWorkerId = 2 ** spec.workerBits - 1;
    this.maxSequence = 2 ** spec.sequenceBits - 1;
    this.maxId = 2n ** BigInt(spec.timestampBits + below) - 1n;
    this.timestampShift = BigInt(below);
    this.sequenceBits = spec.sequenceBits;
    this.dataCenterPart = dataCenterId * 2 ** spec.workerBits;
  }

  /** True when `timestamp` (Unix ms) can be encoded: `epoch <= timestamp <= maxTimestamp`. */
  fits(timestamp: number): boolean {
    return timestamp >= this.epoch && timestamp <= this.maxTimestamp;
  }

  /**
   * What the layout allows, for the start-up log and the docs: bit split, IDs per
   * millisecond and worker, workers, and the last millisecond that fits.
   */
  describe(): string {
    const s = this.spec;
    const split =
      `${s.timestampBits} bits ms + ` +
      (s.dataCenterBits > 0
        ? `${s.dataCenterBits} bits data centre (${this.dataCenterId}) + `
        : '') +
      `${s.workerBits} bits worker + ${s.sequenceBits} bits sequence`;
    const years = (2 ** s.timestampBits / (365.25 * 86_400_000)).toFixed(1);
    return (
      `${split}: ${this.maxSequence + 1} IDs per ms per worker (${((this.maxSequence + 1) * 1000).toLocaleString('en-US')}/s), ` +
      `${this.maxWorkerId + 1} worker IDs${s.dataCenterBits > 0 ? ` in each of ${2 ** s.dataCenterBits} data centres` : ''}, ` +
      `IDs up to ${this.maxId} (${this.maxId <= BigInt(Number.MAX_SAFE_INTEGER) ? 'JavaScript-safe' : 'beyond 2^53: bigint or string'}), ` +
      `timestamps from ${new Date(this.epoch).toISOString()} until ${new Date(this.maxTimestamp).toISOString()} (${years} years)`
    );
  }

  /**
   * The ID with sequence 0 of `timestamp` and `workerId`; add a sequence to it. Callers
   * check the ranges (the generator does, once per millisecond).
   */
  base(timestamp: number, workerId: number): bigint {
    return (
      (BigInt(timestamp - this.epoch) << this.timestampShift) |
      BigInt((this.dataCenterPart + workerId) << this.sequenceBits)
    );
  }

  /** Builds an ID from its fields. @throws {InvalidArgumentError} when a field is out of range. */
  compose(timestamp: number, workerId: number, sequence: number): bigint {
    const fields = [
      ['timestamp', timestamp, this.epoch, this.maxTimestamp, ` (got ${timestamp})`],
      ['workerId', workerId, 0, this.maxWorkerId, ''],
      ['sequence', sequence, 0, this.maxSequence, ''],
    ] as const;
    for (const [field, value, min, max, got] of fields) {
      if (!Number.isInteger(value) || value < min || value > max)
        throw new InvalidArgumentError(
          `${field} must be an integer in ${min}..${max}${got}`,
          field,
        );
    }
    return this.base(timestamp, workerId) + SNOWFLAKE_SEQUENCES[sequence]!;
  }

  /**
   * Splits an ID into its fields, using this layout's epoch and bit split. Accepts a bigint
   * or its decimal string (as IDs travel on the wire).
   * @throws {InvalidArgumentError} for a non-decimal string, a negative ID or one above the layout's largest.
   */
  decode(id: bigint | string): DecodedSnowflakeId {
    const range = `id must be a decimal integer in 0..${this.maxId}`;
    if (typeof id !== 'bigint' && !(typeof id === 'string' && DECIMAL.test(id)))
      throw new InvalidArgumentError(range, 'id');
    const value = BigInt(id);
    if (value < 0n || value > this.maxId) throw new InvalidArgumentError(range, 'id');
    const s = this.spec;
    const field = (shift: number, bits: number) =>
      Number((value >> BigInt(shift)) & ((1n << BigInt(bits)) - 1n));
    const timestamp = Number(value >> this.timestampShift) + this.epoch;
    return {
      id: value,
      timestamp,
      date: new Date(timestamp),
      dataCenterId: field(s.sequenceBits + s.workerBits, s.dataCenterBits),
      workerId: field(s.sequenceBits, s.workerBits),
      sequence: field(0, s.sequenceBits),
    };
  }
}
