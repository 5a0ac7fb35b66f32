import { ModeDisabledError } from './errors/mode-disabled.error';
import type { NumberMode } from './numbers/number-format';

/** Generator modes. Each key is served by the mode that was asked for; there is no fallback between them. */
export type LeafMode = 'segment' | 'snowflake' | 'sequence';

/** Every mode, in the order the module registers them. */
export const LEAF_MODE_NAMES: readonly LeafMode[] = ['segment', 'snowflake', 'sequence'];

/**
 * The calls an application makes for IDs, whoever serves them: `LeafModule` provides it
 * in-process (`EmbeddedIdService`, over the database and ZooKeeper), `LeafClientModule` and
 * `LeafClient` (`nestjs-leaf/client`) remotely, from Leaf servers. Inject `IdService` and
 * switch between the two by changing the module import. An abstract class, so that it is
 * the Nest injection token of both modules without this file importing Nest.
 *
 * One vocabulary across the library: a `key` names what IDs are for (a segment tag, the
 * `biz_tag` row; ignored by snowflake, as in Leaf); `get(key)` waits when it must,
 * `getIds(key, count)` returns a batch, increasing.
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
   * `count` UUIDv7 (RFC 9562) made from snowflake IDs for `key`, increasing (docs/formats.md):
   * `LeafModule`'s from its own snowflake mode, `LeafClient`'s from the servers'. An
   * `IdService` of one's own that does not override this answers `ModeDisabledError`.
   * @throws {ModeDisabledError} when snowflake mode is off (or not offered).
   * @throws {LeafError} as {@link getIds} with `'snowflake'`.
   */
  uuids(key: string, count: number): Promise<string[]> {
    void key;
    void count;
    return Promise.reject(new ModeDisabledError('snowflake'));
  }

  /**
   * `count` TypeIDs (`prefix_` and a UUIDv7 in base32) made from snowflake IDs, increasing.
   * @throws {InvalidArgumentError} for a prefix TypeID does not allow.
   * @throws {LeafError} as {@link uuids}.
   */
  typeIds(prefix: string, count: number): Promise<string[]> {
    void prefix;
    void count;
    return Promise.reject(new ModeDisabledError('snowflake'));
  }

  /**
   * `count` business numbers of `tag` (`ORD-20261204-000123`, docs/formats.md, "Business
   * numbers"), increasing, of one period; `mode` is the tag's format's. `LeafModule` answers
   * from `BusinessNumberService`, `LeafClient` from the servers; an `IdService` of one's own
   * that does not override this answers `ModeDisabledError`.
   * @throws {NumberFormatNotFoundError} when the tag has no format; {@link LeafError} as
   *   {@link getIds} (`NumberOverflowError` when the counter outgrows its width).
   */
  businessNumbers(mode: NumberMode, tag: string, count: number): Promise<string[]> {
    void tag;
    void count;
    return Promise.reject(new ModeDisabledError(mode));
  }
}
