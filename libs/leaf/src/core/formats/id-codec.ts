/**
 * IDs issued earlier, written and read again (`IdService.encode` / `decode`,
 * docs/public-ids.md): the formats an existing ID can be written in, and a text read with the
 * service's snowflake layout and key ring. Pure functions over the format table.
 */
import { InvalidArgumentError } from '../errors/invalid-argument.error';
import { ModeDisabledError } from '../errors/mode-disabled.error';
import { LEAF_MODE_NAMES, type LeafMode } from '../id.service';
import { isLeafId } from '../leaf-id-text';
import type { SnowflakeLayout } from '../snowflake/snowflake-layout';
import {
  ID_FORMATS,
  ID_FORMAT_TABLE,
  decodeId,
  detectIdFormat,
  idFormatWriter,
  parseIdFormat,
  type DecodedId,
  type IdFormat,
} from './id-format';
import type { OpaqueIds } from './opaque-ids';

/**
 * Most IDs one encode request carries: 500 IDs of 19 digits make a URL of 10 KB, within
 * Node's 16 KiB limit on a request's head.
 */
export const MAX_ENCODE_IDS = 500;

/** Options of `IdService.decode`. */
export interface IdDecodeOptions {
  /** The text's format. @default told by its shape */
  readonly format?: IdFormat;
  /** `snowflake`: read a number as a snowflake ID (its time, worker, sequence). */
  readonly mode?: LeafMode;
}

/**
 * The formats `IdService.encode` writes an existing ID in: those of the number itself or
 * keyed (decimal, base62/36/32, opaque). UUIDv7, TypeID and opaque UUIDs carry random bits
 * chosen when the ID is issued: they come from `getTexts`.
 */
export const ENCODE_FORMATS: readonly IdFormat[] = Object.freeze(
  ID_FORMATS.filter((name) => !ID_FORMAT_TABLE[name].snowflake),
);

/**
 * `ids`, issued earlier, written in `format` (one of {@link ENCODE_FORMATS}), with `opaque`.
 * @throws {InvalidArgumentError} for another format, or IDs that are not 1 or more bigints in
 *   1..2^63 − 1. @throws {OpaqueDisabledError} for `opaque` without a key ring.
 */
export function encodeIssuedIds(
  ids: readonly bigint[],
  format: IdFormat,
  opaque: OpaqueIds | null,
): string[] {
  const write = idFormatWriter(format, { mode: 'segment', key: '-', opaque }, ENCODE_FORMATS);
  assertEncodable(ids);
  return write(ids);
}

/**
 * What `text` encodes ({@link decodeId}), a number read as a snowflake ID with `mode:
 * 'snowflake'`, the formats made from snowflake IDs always with `layout`.
 * @throws {ModeDisabledError} when it needs the snowflake layout and `layout` is null.
 * @throws as {@link decodeId}.
 */
export function decodeIdAs(
  text: string,
  options: IdDecodeOptions,
  layout: SnowflakeLayout | null,
  opaque: OpaqueIds | null,
): DecodedId {
  assertDecodeMode(options.mode);
  const format =
    options.format === undefined
      ? (detectIdFormat(text) ?? undefined)
      : parseIdFormat(options.format, ID_FORMATS);
  const snowflake =
    options.mode === 'snowflake' || (format !== undefined && ID_FORMAT_TABLE[format].snowflake);
  if (snowflake && !layout) throw new ModeDisabledError('snowflake');
  return decodeId(text, { format, layout: snowflake ? layout : null, opaque });
}

/** Checks a decode's `mode`. @throws {InvalidArgumentError} (`mode`) unless left out or a mode. */
export function assertDecodeMode(mode: LeafMode | undefined): void {
  if (mode !== undefined && !LEAF_MODE_NAMES.includes(mode))
    throw new InvalidArgumentError(`mode must be one of ${LEAF_MODE_NAMES.join(', ')}`, 'mode');
}

/**
 * Checks the IDs `IdService.encode` is given: 1 or more bigints in 1..2^63 − 1.
 * @throws {InvalidArgumentError} (`ids`) otherwise.
 */
export function assertEncodable(ids: readonly bigint[]): void {
  if (!Array.isArray(ids) || ids.length === 0) {
    throw new InvalidArgumentError('ids must list at least one ID', 'ids');
  }
  for (const id of ids) {
    if (!isLeafId(id)) throw new InvalidArgumentError('ids must be bigints in 1..2^63 - 1', 'ids');
  }
}
