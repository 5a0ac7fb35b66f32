import { decodeIdAs, encodeIssuedIds, type IdDecodeOptions } from './formats/id-codec';
import { idFormatWriter, type DecodedId, type IdFormat } from './formats/id-format';
import type { OpaqueIds } from './formats/opaque-ids';
import { ModeDisabledError } from './errors/mode-disabled.error';
import type { SnowflakeLayout } from './snowflake/snowflake-layout';
import {
  snowflakeTimeBounds,
  timeInterval,
  type SnowflakeTimeBounds,
} from './snowflake/snowflake-time-bounds';

/** Generator modes. Each key is served by the mode that was asked for; there is no fallback between them. */
export type LeafMode = 'segment' | 'snowflake' | 'sequence';

/** Every mode, in the order the module registers them. */
export const LEAF_MODE_NAMES: readonly LeafMode[] = ['segment', 'snowflake', 'sequence'];

/** Options of {@link IdService.getTexts}. */
export interface IdTextsOptions {
  /** TypeID's prefix (`typeid` only): empty, or up to 63 of `a-z` and `_`. @default '' */
  readonly prefix?: string;
}

/**
 * The calls an application makes for IDs, whoever serves them: `LeafModule` provides it
 * in-process (`EmbeddedIdService`, over the database and ZooKeeper), `LeafClientModule` and
 * `LeafClient` (`nestjs-leaf/client`) remotely, from Leaf servers. Inject `IdService` and
 * switch between the two by changing the module import. An abstract class, so that it is
 * the Nest injection token of both modules without this file importing Nest.
 *
 * One vocabulary across the library: a `key` names what IDs are for (a segment tag, the
 * `biz_tag` row; ignored by snowflake, as in Leaf); `get(key)` waits when it must,
 * `getIds(key, count)` returns a batch, increasing; `getTexts` the same batch written in one
 * of the ID formats (`ID_FORMAT_TABLE`, docs/formats.md).
 */
export abstract class IdService {
  /**
   * One ID from `mode` for `key`.
   * @throws {LeafError} `InvalidArgumentError`, `TagNotFoundError`, `ModeDisabledError`,
   *   `SegmentNotReadyError`, `SnowflakeNotReadyError`, ... (the generator's, or the server's).
   */
  abstract get(mode: LeafMode, key: string): Promise<bigint>;

  /**
   * `count` IDs from `mode` for `key`, increasing.
   * @throws {InvalidArgumentError} unless `count` is an integer in 1..maxBatchSize.
   * @throws {LeafError} as {@link get}.
   */
  abstract getIds(mode: LeafMode, key: string, count: number): Promise<bigint[]>;

  /**
   * `count` IDs from `mode` for `key`, increasing, written in `format`: `decimal`, `base62`,
   * `base36`, `base32` for every mode; `uuid` (UUIDv7) and `typeid` (with `options.prefix`)
   * made from snowflake IDs with their layout, so with `mode` `'snowflake'` only
   * (docs/formats.md); `opaque` for every mode, under the key ring (docs/public-ids.md). The
   * format, the mode, the prefix and the key ring are checked before any ID is taken.
   *
   * ```ts
   * await ids.getTexts('segment', 'orders', 2, 'base62'); // two segment IDs, 11 characters each
   * await ids.getTexts('snowflake', 'users', 1, 'typeid', { prefix: 'user' }); // ['user_01m8…']
   * ```
   * @throws {InvalidArgumentError} for an unknown format, a UUIDv7 or TypeID from another mode,
   *   or an invalid prefix.
   * @throws {ModeDisabledError} for a UUIDv7 or TypeID when the snowflake layout is unknown
   *   (snowflake mode off; an `IdService` of one's own that does not override {@link layoutOf}:
   *   after its `getIds`).
   * @throws {OpaqueDisabledError} for `opaque` without a key ring ({@link opaqueIds}).
   * @throws {LeafError} as {@link getIds}.
   */
  async getTexts(
    mode: LeafMode,
    key: string,
    count: number,
    format: IdFormat,
    options: IdTextsOptions = {},
  ): Promise<string[]> {
    const write = idFormatWriter(format, {
      mode,
      key,
      layout: this.layoutOf(mode),
      prefix: options.prefix,
      opaque: this.opaqueIds(),
    });
    return write(await this.getIds(mode, key, count));
  }

  /**
   * The smallest and largest snowflake ID, and UUIDv7, of the instant `from` or of the interval
   * `[from, to]` (ms since the Unix epoch or Dates, both ends inclusive), with this service's
   * layout: "rows created between t1 and t2" as a range scan of the primary key
   * (docs/snowflake.md, "IDs for a time"; the pure function: `snowflakeTimeBounds`).
   *
   * ```ts
   * const { min, max } = await ids.snowflakeBounds(new Date('2026-03-01'), new Date('2026-03-02'));
   * ```
   * @throws {InvalidArgumentError} for an end that is not a valid Date or a safe integer, or
   *   `from` after `to`.
   * @throws {TimeBeforeEpochError} / {@link TimeBeyondLayoutError} for an end the layout cannot encode.
   * @throws {ModeDisabledError} when the snowflake layout is unknown (as {@link getTexts}).
   */
  async snowflakeBounds(
    from: number | Date,
    to: number | Date = from,
  ): Promise<SnowflakeTimeBounds> {
    const [start, end] = timeInterval(from, to);
    const layout = this.layoutOf('snowflake');
    if (!layout) throw new ModeDisabledError('snowflake');
    return snowflakeTimeBounds(layout, start, end);
  }

  /**
   * `ids`, IDs issued earlier (1..2^63 − 1), written in `format` (one of `ENCODE_FORMATS`):
   * an opaque ID derived from a primary key on read, say (docs/public-ids.md). In process with
   * the module's key ring; the remote client has a server write them (it holds no keys).
   * @throws {InvalidArgumentError} for another format, an ID outside 1..2^63 − 1 or not a
   *   bigint, or an empty list.
   * @throws {OpaqueDisabledError} for `opaque` without a key ring.
   */
  async encode(ids: readonly bigint[], format: IdFormat): Promise<string[]> {
    return encodeIssuedIds(ids, format, this.opaqueIds());
  }

  /**
   * What `text`, an ID in any format of the table, encodes: the number, the UUID and prefix,
   * time, worker and sequence (docs/formats.md), read with this service's snowflake layout
   * and key ring; the remote client asks a server (`GET /api/decode/{text}`), which holds the
   * keys.
   * @throws {InvalidArgumentError} for a text that is not valid in its format, or whose format
   *   cannot be told.
   * @throws {ModeDisabledError} for `mode: 'snowflake'` where the layout is unknown.
   * @throws {OpaqueDisabledError} / {@link OpaqueKeyRetiredError} for an opaque text without a
   *   key ring, or of a version not in it.
   */
  async decode(text: string, options: IdDecodeOptions = {}): Promise<DecodedId> {
    return decodeIdAs(text, options, this.layoutOf('snowflake'), this.opaqueIds());
  }

  /**
   * The snowflake layout of `mode`'s IDs, which UUIDv7 and TypeID are made with; `null` when
   * this service does not know it (the default).
   */
  protected layoutOf(_mode: LeafMode): SnowflakeLayout | null {
    return null;
  }

  /** The key ring opaque IDs are written with; `null` when this service has none (the default). */
  protected opaqueIds(): OpaqueIds | null {
    return null;
  }
}
