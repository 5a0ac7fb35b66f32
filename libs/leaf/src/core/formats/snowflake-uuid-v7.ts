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

/** A UUID's 32 lowercase hex digits in the canonical 8-4-4-4-12 form. */
export function canonicalUuid(hex: string): string {
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
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

/** `7`, the 12-bit counter in hex and a dash: the third group of the text. */
const VERSION_AND_COUNTER: readonly string[] = Object.freeze(
  Array.from({ length: 4096 }, (_, n) => `7${n.toString(16).padStart(3, '0')}-`),
);
/** Each byte in two hex digits. */
const HEX: readonly string[] = Object.freeze(
  Array.from({ length: 256 }, (_, n) => n.toString(16).padStart(2, '0')),
);
/**
 * Random bytes per UUID: 2 for the random bits of the variant group, 6 for the last group (12
 * hex digits: shorter than 13, so V8 copies a slice of them instead of keeping the whole text
 * it was cut from alive).
 */
const RANDOM_BYTES = 8;
/** UUIDs per draw of random bytes. */
const POOL_UUIDS = 512;
// Bound once: under a vm context (Jest's) every global lookup is slow.
const toNumber = Number;
const toBigInt = BigInt;
const { asUintN } = BigInt;

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

/**
 * Maps the snowflake IDs of one layout to UUIDv7 and back (the layout at the top of this
 * file). One instance per layout; it holds the text of the last millisecond it saw and the
 * random tails of its next UUIDs (state of its own, nothing shared).
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
  /** Bits below the timestamp (data centre, worker, sequence). */
  private readonly lowBits: number;
  private readonly sequenceBits: number;
  private readonly sequenceMask: number;
  /** Where the data-centre and worker bits start in the 14 bits after the variant. */
  private readonly nodeShift: number;
  private readonly randomMask: number;
  private readonly randomFill: (bytes: Uint8Array) => void;
  private readonly random = new Uint8Array(POOL_UUIDS * RANDOM_BYTES);
  /** `random` in hex, two digits per byte. */
  private randomHex = '';
  private randomAt = POOL_UUIDS;
  /** The variant group and its dash for each random value, with the bits of worker `node`. */
  private variantGroups: readonly string[] = [];
  private node = -1;
  /** The IDs of the last millisecond seen are those in `[base, next)`; its text is `timeGroups`. */
  private base = 1n;
  private next = 0n;
  /** IDs per millisecond field: `2 ^ lowBits`. */
  private readonly span: bigint;
  private timeGroups = '';

  constructor(
    /** The layout the snowflake IDs are made with (epoch and bit split). */
    readonly layout: SnowflakeLayout,
    options: SnowflakeUuidV7Options = {},
  ) {
    const spec = layout.spec;
    this.lowBits = spec.dataCenterBits + spec.workerBits + spec.sequenceBits;
    this.epoch = layout.epoch;
    this.maxId = layout.maxId;
    this.timestampShift = toBigInt(this.lowBits);
    this.span = 1n << this.timestampShift;
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
    // Made as often as IDs (bench/formats.bench.ts): within a millisecond already seen, one
    // bigint operation, three concatenations of table entries and a 12-digit slice of random
    // hex drawn 512 UUIDs at a time.
    if (typeof id !== 'bigint' || !(id >= this.base && id < this.next)) this.newMillisecond(id);
    const low = toNumber(asUintN(this.lowBits, id));
    const node = low >>> this.sequenceBits;
    if (node !== this.node) this.newNode(node);
    let at = this.randomAt;
    if (at === POOL_UUIDS) {
      const random = this.random;
      this.randomFill(random);
      this.randomHex = Buffer.from(random.buffer, random.byteOffset, random.length).toString('hex');
      at = 0;
    }
    this.randomAt = at + 1;
    const byte = at * RANDOM_BYTES;
    const variant = ((this.random[byte]! << 8) | this.random[byte + 1]!) & this.randomMask;
    return (
      this.timeGroups +
      VERSION_AND_COUNTER[low & this.sequenceMask]! +
      this.variantGroups[variant]! +
      this.randomHex.slice(2 * byte + 4, 2 * byte + 16)
    );
  }

  /** The variant group and dash for each random value, with the data-centre and worker bits of `node`. */
  private newNode(node: number): void {
    this.node = node;
    const fixed = 0x8000 | (node << this.nodeShift);
    this.variantGroups = Array.from(
      { length: this.randomMask + 1 },
      (_, random) => `${HEX[(fixed | random) >>> 8]!}${HEX[(fixed | random) & 0xff]!}-`,
    );
  }

  /** Checks `id` and makes the text of its millisecond. */
  private newMillisecond(id: bigint): void {
    if (typeof id !== 'bigint' || id < 0n || id > this.maxId) {
      throw new InvalidArgumentError(`id must be a snowflake ID in 0..${this.maxId}`, 'id');
    }
    const field = id >> this.timestampShift;
    this.base = field << this.timestampShift;
    this.next = this.base + this.span;
    // 48 bits as 24 + 24: each a safe integer for the shifts below.
    const ms = toNumber(field) + this.epoch;
    const high = Math.floor(ms / 0x1000000);
    const low = ms - high * 0x1000000;
    this.timeGroups =
      HEX[high >>> 16]! +
      HEX[(high >>> 8) & 0xff]! +
      HEX[high & 0xff]! +
      HEX[low >>> 16]! +
      '-' +
      HEX[(low >>> 8) & 0xff]! +
      HEX[low & 0xff]! +
      '-';
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
