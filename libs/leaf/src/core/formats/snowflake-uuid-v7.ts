/**
 * UUIDv7 (RFC 9562) made from snowflake IDs, so that a UUID has the guarantees of the snowflake
 * ID under it (docs/formats.md):
 *
 * ```
 * unix_ts_ms (48) | ver 7 (4) | rand_a (12) | var 0b10 (2) | rand_b (62)
 * epoch + timestamp |         | sequence    |              | data centre + worker, then random
 * ```
 *
 * `rand_a` is the snowflake sequence within the millisecond (RFC 9562 §6.2 method 1, a
 * fixed-length dedicated counter); a layout with fewer than 12 sequence bits leaves the top
 * bits of `rand_a` zero (the layout rules allow at most 12, so nothing spills into `rand_b`).
 * `rand_b` starts with the layout's data-centre and worker bits (at most 10), the rest is
 * random. Two workers therefore never make the same UUID, and one worker's UUIDs are in the
 * order of its IDs: text order, byte order and the order of the snowflake IDs agree.
 */
import { randomFillSync } from 'node:crypto';
import { InvalidArgumentError } from '../errors/invalid-argument.error';
import type { SnowflakeLayout } from '../snowflake/snowflake-layout';

/** RFC 9562's canonical text of a UUIDv7: lowercase hex 8-4-4-4-12, version 7, variant `0b10`. */
export const UUID_V7_PATTERN =
  /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/**
 * Whether `text` is a UUIDv7 in RFC 9562's canonical form: 36 characters, lowercase hex digits
 * in groups 8-4-4-4-12, version nibble 7, variant bits `0b10`. Uppercase, braces, a URN prefix
 * or another version are refused.
 */
export function isUuidV7(text: unknown): text is string {
  return typeof text === 'string' && UUID_V7_PATTERN.test(text);
}

/** What a UUIDv7 made by {@link SnowflakeUuidV7} says about itself. */
export interface DecodedUuidV7 {
  readonly uuid: string;
  /** `unix_ts_ms`: milliseconds since the Unix epoch. */
  readonly timestamp: number;
  /** `timestamp` as a Date. */
  readonly date: Date;
  /** `rand_a`: the snowflake sequence within the millisecond. */
  readonly counter: number;
  /** The data-centre ID (0 in layouts without data-centre bits). */
  readonly dataCenterId: number;
  /** The worker ID (within the data centre). */
  readonly workerId: number;
  /**
   * The snowflake ID the UUID was made from; `null` when its fields do not fit the layout
   * (a UUIDv7 made elsewhere, or with another epoch).
   */
  readonly snowflakeId: bigint | null;
}

/** Options of a {@link SnowflakeUuidV7}. */
export interface SnowflakeUuidV7Options {
  /** Fills a buffer with random bytes (the random part of `rand_b`). @default node:crypto's randomFillSync */
  readonly randomFill?: (bytes: Uint8Array) => void;
}

const HEX: readonly string[] = Object.freeze(
  Array.from({ length: 256 }, (_, n) => n.toString(16).padStart(2, '0')),
);
/** `7` and the 12-bit counter in hex: the third group of the text. */
const VERSION_AND_COUNTER: readonly string[] = Object.freeze(
  Array.from({ length: 4096 }, (_, n) => `7${n.toString(16).padStart(3, '0')}`),
);
/** Random bytes per UUID: 2 for the variant group, 6 for the last group. */
const RANDOM_BYTES = 8;
/** Random bytes drawn at once (512 UUIDs). */
const POOL_BYTES = 512 * RANDOM_BYTES;
// Bound once: under a vm context (Jest's) every global lookup is slow (id-text-forms.ts).
const toNumber = Number;
const toBigInt = BigInt;

/**
 * What a UUIDv7 says, read with `layout` (the one it was made with): time, counter, data-centre
 * and worker IDs, and the snowflake ID it was made from. The time and the counter do not depend
 * on the layout; the split of the data-centre and worker bits and the snowflake ID do.
 * @throws {InvalidArgumentError} unless `uuid` is a UUIDv7 in canonical form ({@link isUuidV7}).
 */
export function decodeUuidV7(uuid: string, layout: SnowflakeLayout): DecodedUuidV7 {
  if (!isUuidV7(uuid)) {
    throw new InvalidArgumentError(
      'uuid must be a UUIDv7 in canonical form: lowercase hex 8-4-4-4-12, version 7, variant 0b10',
      'uuid',
    );
  }
  const spec = layout.spec;
  const sequenceBits = spec.sequenceBits;
  const timestamp = parseInt(uuid.slice(0, 8), 16) * 0x10000 + parseInt(uuid.slice(9, 13), 16);
  const counter = parseInt(uuid.slice(15, 18), 16);
  const nodeShift = 14 - spec.dataCenterBits - spec.workerBits;
  const node = (parseInt(uuid.slice(19, 23), 16) & 0x3fff) >>> nodeShift;
  const fits = layout.fits(timestamp) && counter <= layout.maxSequence;
  return {
    uuid,
    timestamp,
    date: new Date(timestamp),
    counter,
    dataCenterId: node >>> spec.workerBits,
    workerId: node & layout.maxWorkerId,
    snowflakeId: fits
      ? (toBigInt(timestamp - layout.epoch) <<
          toBigInt(sequenceBits + spec.workerBits + spec.dataCenterBits)) |
        toBigInt((node << sequenceBits) | counter)
      : null,
  };
}

/** The first two groups and their dashes, `tttttttt-tttt-`, of Unix millisecond `ms`. */
function timeGroups(ms: number): string {
  const high = Math.floor(ms / 0x10000);
  return `${high.toString(16).padStart(8, '0')}-${(ms - high * 0x10000).toString(16).padStart(4, '0')}-`;
}

/**
 * Maps the snowflake IDs of one layout to UUIDv7 and back (the layout at the top of this
 * file). One instance per layout; it holds a pool of random bytes and the text of the last
 * millisecond, so it is not shared between threads (nothing in Node is).
 *
 * ```ts
 * const uuids = new SnowflakeUuidV7(new SnowflakeLayout(DEFAULT_SNOWFLAKE_EPOCH));
 * uuids.fromId(2128094966440788019n); // '01a23699-66ed-7033-80…': 2026-12-02T11:52:32.749Z, sequence 51, worker 0
 * ```
 */
export class SnowflakeUuidV7 {
  private readonly epoch: number;
  private readonly maxId: bigint;
  private readonly timestampShift: bigint;
  private readonly lowMask: bigint;
  private readonly sequenceBits: number;
  private readonly sequenceMask: number;
  /** Where the data-centre and worker bits start in the 14 bits after the variant. */
  private readonly nodeShift: number;
  private readonly randomMask: number;
  private readonly randomFill: (bytes: Uint8Array) => void;
  private readonly pool = new Uint8Array(POOL_BYTES);
  private poolAt = POOL_BYTES;
  private lastMs = -1;
  private lastTimeGroups = '';

  constructor(
    /** The layout the snowflake IDs are made with (epoch and bit split). */
    readonly layout: SnowflakeLayout,
    options: SnowflakeUuidV7Options = {},
  ) {
    const spec = layout.spec;
    const below = spec.dataCenterBits + spec.workerBits + spec.sequenceBits;
    this.epoch = layout.epoch;
    this.maxId = layout.maxId;
    this.timestampShift = toBigInt(below);
    this.lowMask = (1n << toBigInt(below)) - 1n;
    this.sequenceBits = spec.sequenceBits;
    this.sequenceMask = layout.maxSequence;
    this.nodeShift = 14 - spec.dataCenterBits - spec.workerBits;
    this.randomMask = (1 << this.nodeShift) - 1;
    this.randomFill = options.randomFill ?? ((bytes) => randomFillSync(bytes));
  }

  /**
   * The UUIDv7 of snowflake ID `id`, in canonical lowercase text.
   * @throws {InvalidArgumentError} unless `id` is a bigint in 0..the layout's largest ID.
   */
  fromId(id: bigint): string {
    if (typeof id !== 'bigint' || id < 0n || id > this.maxId) {
      throw new InvalidArgumentError(`id must be a snowflake ID in 0..${this.maxId}`, 'id');
    }
    const ms = toNumber(id >> this.timestampShift) + this.epoch;
    const low = toNumber(id & this.lowMask);
    if (ms !== this.lastMs) {
      this.lastMs = ms;
      this.lastTimeGroups = timeGroups(ms);
    }
    let at = this.poolAt;
    if (at === POOL_BYTES) {
      this.randomFill(this.pool);
      at = 0;
    }
    this.poolAt = at + RANDOM_BYTES;
    const p = this.pool;
    const variant =
      0x8000 |
      ((low >>> this.sequenceBits) << this.nodeShift) |
      (((p[at]! << 8) | p[at + 1]!) & this.randomMask);
    return (
      this.lastTimeGroups +
      VERSION_AND_COUNTER[low & this.sequenceMask]! +
      '-' +
      HEX[variant >>> 8]! +
      HEX[variant & 0xff]! +
      '-' +
      HEX[p[at + 2]!]! +
      HEX[p[at + 3]!]! +
      HEX[p[at + 4]!]! +
      HEX[p[at + 5]!]! +
      HEX[p[at + 6]!]! +
      HEX[p[at + 7]!]!
    );
  }

  /**
   * What a UUIDv7 says, read with this layout ({@link decodeUuidV7}).
   * @throws {InvalidArgumentError} unless `uuid` is a UUIDv7 in canonical form ({@link isUuidV7}).
   */
  decode(uuid: string): DecodedUuidV7 {
    return decodeUuidV7(uuid, this.layout);
  }

  /**
   * The snowflake ID a UUIDv7 of this layout was made from.
   * @throws {InvalidArgumentError} for a text that is not a UUIDv7, or one whose time or counter
   *   does not fit the layout.
   */
  toId(uuid: string): bigint {
    const { snowflakeId } = this.decode(uuid);
    if (snowflakeId === null) {
      throw new InvalidArgumentError(
        "uuid's time or counter does not fit the snowflake layout",
        'uuid',
      );
    }
    return snowflakeId;
  }
}
