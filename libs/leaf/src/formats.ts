/**
 * `nestjs-leaf/formats`: the text forms of Leaf IDs, as pure functions (docs/formats.md) —
 * fixed-width base62, base36 and Crockford base32 whose text order is numeric order, UUIDv7
 * made from snowflake IDs (the worker ID in the random bits, the sequence as the counter),
 * TypeID over them, opaque public IDs under a key ring (`OpaqueIds`, FF1 over AES) — one
 * table of them, `ID_FORMAT_TABLE` — `decodeId` for what any of these texts encodes, and
 * `snowflakeTimeBounds`, the IDs and UUIDv7 of a time interval. Loads no framework, driver or file system. Issuing:
 * `IdService.getTexts(mode, key, count, format)`; over HTTP, `?format=` on the ID routes and
 * `GET /api/snowflake/uuid/{key}`.
 */
export {
  ID_TEXT_FORMS,
  ID_TEXT_WIDTHS,
  decodeIdText,
  encodeIdText,
  isIdText,
  type IdTextForm,
} from './core/formats/id-text-forms';
export {
  SnowflakeUuidV7,
  UUID_V7_PATTERN,
  decodeUuidV7,
  isUuidV7,
  type DecodedUuidV7,
  type SnowflakeUuidV7Options,
} from './core/formats/snowflake-uuid-v7';
export {
  TYPE_ID_PREFIX_PATTERN,
  assertTypeIdPrefix,
  isTypeId,
  isTypeIdPrefix,
  parseTypeId,
  typeIdFromUuid,
  type ParsedTypeId,
} from './core/formats/type-id';
export {
  ID_FORMATS,
  ID_FORMAT_TABLE,
  decodeId,
  detectIdFormat,
  idFormatWriter,
  parseIdFormat,
  type DecodeIdOptions,
  type DecodedId,
  type DecodedIdFields,
  type IdFormat,
  type IdFormatContext,
  type IdFormatEntry,
  type IdReadContext,
} from './core/formats/id-format';
export {
  OPAQUE_ID_PATTERN,
  OPAQUE_UUID_PATTERN,
  OpaqueIds,
  parseOpaqueKeys,
  type OpaqueKey,
} from './core/formats/opaque-ids';
export { Ff1 } from './core/formats/ff1';
export { ENCODE_FORMATS, MAX_ENCODE_IDS, type IdDecodeOptions } from './core/formats/id-codec';
export type { IdTextsOptions } from './core/id.service';
export {
  snowflakeTimeBounds,
  type SnowflakeTimeBounds,
} from './core/snowflake/snowflake-time-bounds';

// The layout UUIDv7 are made and read with, and the errors these functions throw.
export {
  DEFAULT_SNOWFLAKE_EPOCH,
  JS_SAFE_EPOCH,
  JS_SAFE_LAYOUT,
  SnowflakeLayout,
  type SnowflakeLayoutSpec,
} from './core/snowflake/snowflake-layout';
export { LeafError, LeafErrorCode } from './core/errors/leaf.error';
export { InvalidArgumentError } from './core/errors/invalid-argument.error';
export { OpaqueDisabledError, OpaqueKeyRetiredError } from './core/errors/opaque.error';
export {
  TimeBeforeEpochError,
  TimeBeyondLayoutError,
} from './core/errors/time-outside-layout.error';
