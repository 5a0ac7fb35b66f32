/**
 * The ID formats as one table (docs/formats.md): each entry writes a batch of IDs in its form
 * and reads a text of it back. Leaf's decimal and the fixed-width base62, base36 and base32
 * are texts of the number itself; UUIDv7 and TypeID are made from snowflake IDs with their
 * layout. The ID routes' `?format=`, the UUID and TypeID routes, the decode route,
 * `IdService.getTexts` and the remote client all read this table: a new format is one entry
 * here (and its tests). Pure functions.
 */
import { InvalidArgumentError } from '../errors/invalid-argument.error';
import { ModeDisabledError } from '../errors/mode-disabled.error';
import { OpaqueDisabledError } from '../errors/opaque.error';
import type { LeafMode } from '../id.service';
import { LEAF_ID_PATTERN, parseLeafId } from '../leaf-id-text';
import { DEFAULT_SNOWFLAKE_EPOCH, SnowflakeLayout } from '../snowflake/snowflake-layout';
import { decodeIdText, encodeIdText, type IdTextForm } from './id-text-forms';
import { OPAQUE_ID_PATTERN, OPAQUE_UUID_PATTERN, type OpaqueIds } from './opaque-ids';
import { SnowflakeUuidV7, decodeUuidV7 } from './snowflake-uuid-v7';
import { assertTypeIdPrefix, parseTypeId, typeIdFromUuid } from './type-id';

/**
 * Every text form of an ID: Leaf's decimal, the fixed-width forms, UUIDv7, TypeID, opaque and
 * opaque UUID.
 */
export type IdFormat = 'decimal' | IdTextForm | 'uuid' | 'typeid' | 'opaque' | 'opaque-uuid';

/** What a format reads and writes IDs with, beyond the IDs. */
export interface IdReadContext {
  /**
   * The layout of snowflake IDs: needed by the formats made from them, and to read a number's
   * fields (`null`: unknown).
   */
  readonly layout?: SnowflakeLayout | null;
  /** The key ring of opaque IDs (docs/public-ids.md); none: the format is refused. */
  readonly opaque?: OpaqueIds | null;
}

/** What a format writes IDs with. */
export interface IdFormatContext extends IdReadContext {
  /** The mode that issued the IDs. */
  readonly mode: LeafMode;
  /** The key they were issued for. */
  readonly key: string;
  /** TypeID's prefix. @default '' */
  readonly prefix?: string;
}

/** The fields of a snowflake ID, or of the snowflake ID under a UUIDv7. */
export interface DecodedIdFields {
  /** Milliseconds since the Unix epoch. */
  readonly timestamp: number;
  readonly date: Date;
  readonly dataCenterId: number;
  readonly workerId: number;
  /** The sequence within the millisecond (a UUIDv7's `rand_a` counter). */
  readonly sequence: number;
}

/** What {@link decodeId} found. */
export interface DecodedId {
  /** The form read (given, or told by the text's shape). */
  readonly format: IdFormat;
  /**
   * The number: for a decimal, base62, base36 or base32 text the ID itself; for a UUIDv7 or a
   * TypeID the snowflake ID it was made from (`null` when its fields do not fit the layout).
   */
  readonly id: bigint | null;
  /** The UUID of a UUIDv7, a TypeID or an opaque UUID; `null` otherwise. */
  readonly uuid: string | null;
  /** The prefix of a TypeID (may be empty); `null` otherwise. */
  readonly prefix: string | null;
  /**
   * Time, data centre, worker and sequence: for a numeric form only with a layout given (the
   * number alone does not say which mode issued it), for a UUIDv7 or TypeID always.
   */
  readonly fields: DecodedIdFields | null;
}

/** One format of the table. */
export interface IdFormatEntry {
  readonly name: IdFormat;
  /**
   * Made from snowflake IDs with their layout (snowflake mode only, read with the layout);
   * otherwise a text of the number itself, for the IDs of every mode.
   */
  readonly snowflake: boolean;
  /**
   * Written and read under a key ring, where the keys are. The server makes the formats made
   * from snowflake IDs or keyed for a remote client.
   */
  readonly keyed: boolean;
  /** Whether `text` has this format's canonical shape (what {@link detectIdFormat} tries). */
  looksLike(text: string): boolean;
  /**
   * Checks `context` before any ID is taken for it (the layout is not needed yet: a remote
   * client checks here and has the server write).
   * @throws {InvalidArgumentError} for a context the format cannot write with (a mode whose
   *   IDs it is not made from, an invalid prefix).
   * @throws {OpaqueDisabledError} for a keyed format without a key ring.
   */
  check(context: IdFormatContext): void;
  /**
   * `ids` in this format, in their order (`context` checked by {@link check}).
   * @throws {ModeDisabledError} when it needs the snowflake layout and `context` has none.
   */
  encode(ids: readonly bigint[], context: IdFormatContext): string[];
  /**
   * What `text` encodes; `context.layout` reads a number as a snowflake ID, and a UUID's
   * fields; `context.opaque` reads an opaque ID.
   * @throws {InvalidArgumentError} when `text` is not valid in this format.
   * @throws {OpaqueDisabledError} / {@link OpaqueKeyRetiredError} for an opaque ID without a
   *   key ring, or of a version not in it.
   */
  decode(text: string, context: IdReadContext): DecodedId;
}

/** Leaf's layout and epoch: what UUIDv7 and TypeID are read with unless told otherwise. */
const LEAF_DEFAULT_LAYOUT = new SnowflakeLayout(DEFAULT_SNOWFLAKE_EPOCH);

/** The fields of a decoded snowflake ID, UUIDv7 or decode answer, and nothing else of it. */
export function fieldsOf({ timestamp, date, dataCenterId, workerId, sequence }: DecodedIdFields) {
  return { timestamp, date, dataCenterId, workerId, sequence };
}

/** What a number read from a text of `format` says, with its fields under `layout`. */
function decodedNumber(format: IdFormat, id: bigint, layout?: SnowflakeLayout | null): DecodedId {
  const fields = layout ? fieldsOf(layout.decode(id)) : null;
  return { format, id, uuid: null, prefix: null, fields };
}

/**
 * An entry whose `check` follows its facts: `also` first (if any), then a format made from
 * snowflake IDs refuses other modes, a keyed one a context without a key ring.
 */
function formatEntry(
  entry: Omit<IdFormatEntry, 'check'>,
  also?: (context: IdFormatContext) => void,
): IdFormatEntry {
  return {
    ...entry,
    check: (context) => {
      also?.(context);
      if (entry.snowflake && context.mode !== 'snowflake') {
        throw new InvalidArgumentError(
          `format ${entry.name} is made from snowflake IDs: ask snowflake mode (got ${context.mode})`,
          'format',
        );
      }
      if (entry.keyed) keyRing(context);
    },
  };
}

/** An entry for a text of the number itself. */
function numberFormat(
  name: IdFormat,
  shape: RegExp,
  write: (id: bigint) => string,
  read: (text: string) => bigint,
): IdFormatEntry {
  return formatEntry({
    name,
    snowflake: false,
    keyed: false,
    looksLike: (text) => shape.test(text),
    encode: (ids) => ids.map(write),
    decode: (text, { layout }) => decodedNumber(name, read(text), layout),
  });
}

function textForm(form: IdTextForm, shape: RegExp): IdFormatEntry {
  return numberFormat(
    form,
    shape,
    (id) => encodeIdText(id, form),
    (text) => decodeIdText(text, form),
  );
}

/** What a UUIDv7 (under a TypeID or not) says, read with `layout` (default: Leaf's). */
function uuidFields(
  format: IdFormat,
  uuid: string,
  prefix: string | null,
  layout: SnowflakeLayout | null | undefined,
): DecodedId {
  const decoded = decodeUuidV7(uuid, layout ?? LEAF_DEFAULT_LAYOUT);
  const fields = fieldsOf({ ...decoded, sequence: decoded.counter });
  return { format, id: decoded.snowflakeId, uuid, prefix, fields };
}

/**
 * The UUIDv7 maker of a layout, made once (it holds a pool of random bytes and a hex table):
 * keyed by the caller's own layout object, so two applications share nothing.
 */
const UUIDS_BY_LAYOUT = new WeakMap<SnowflakeLayout, SnowflakeUuidV7>();

/** UUIDv7 made from snowflake IDs (`snowflake-uuid-v7.ts`). */
const UUID = formatEntry({
  name: 'uuid',
  snowflake: true,
  keyed: false,
  looksLike: (text) => text.length === 36 && /^[0-9a-fA-F-]+$/.test(text),
  encode: (ids, context) => {
    const layout = context.layout;
    if (!layout) throw new ModeDisabledError('snowflake');
    const uuids = UUIDS_BY_LAYOUT.get(layout) ?? new SnowflakeUuidV7(layout);
    UUIDS_BY_LAYOUT.set(layout, uuids);
    return ids.map((id) => uuids.fromId(id));
  },
  decode: (text, { layout }) => uuidFields('uuid', text, null, layout),
});

/** TypeID (`type-id.ts`) over such a UUIDv7, with the context's prefix. */
const TYPE_ID = formatEntry(
  {
    name: 'typeid',
    snowflake: true,
    keyed: false,
    looksLike: (text) => /^([a-z_]*_)?[0-9a-z]{26}$/.test(text),
    encode: (ids, context) => {
      const prefix = context.prefix ?? '';
      return UUID.encode(ids, context).map((uuid) => typeIdFromUuid(prefix, uuid));
    },
    decode: (text, { layout }) => {
      const { prefix, uuid } = parseTypeId(text);
      return uuidFields('typeid', uuid, prefix, layout);
    },
  },
  (context) => assertTypeIdPrefix(context.prefix ?? ''),
);

/** The key ring of a context. @throws {OpaqueDisabledError} when it has none. */
function keyRing({ opaque }: IdReadContext): OpaqueIds {
  if (opaque) return opaque;
  throw new OpaqueDisabledError(
    'no key ring (option opaque.keys; the server: LEAF_OPAQUE_KEYS or LEAF_OPAQUE_KEYS_FILE)',
  );
}

/** Opaque public IDs (`opaque-ids.ts`, docs/public-ids.md): the number under the key ring. */
const OPAQUE = formatEntry({
  name: 'opaque',
  snowflake: false,
  keyed: true,
  looksLike: (text) => OPAQUE_ID_PATTERN.test(text),
  encode: (ids, context) => keyRing(context).encodeAll(ids),
  decode: (text, context) => decodedNumber('opaque', keyRing(context).decode(text), context.layout),
});

/** Opaque UUIDs: the UUIDv7 of a snowflake ID under the key ring (docs/public-ids.md). */
const OPAQUE_UUID = formatEntry({
  name: 'opaque-uuid',
  snowflake: true,
  keyed: true,
  looksLike: (text) => OPAQUE_UUID_PATTERN.test(text),
  encode: (ids, context) => keyRing(context).encodeUuids(UUID.encode(ids, context)),
  decode: (text, context) => {
    const [uuid] = keyRing(context).decodeUuids([text]);
    return uuidFields('opaque-uuid', uuid!, null, context.layout);
  },
});

/**
 * The table, in the order the docs list the formats. Detection tries the shapes in this order:
 * decimal before base62 (digits alone are both), base36 (lowercase) and base32 (uppercase)
 * apart by their letters.
 */
export const ID_FORMAT_TABLE: Readonly<Record<IdFormat, IdFormatEntry>> = Object.freeze({
  decimal: numberFormat('decimal', LEAF_ID_PATTERN, String, (text) => parseLeafId(text, 'text')),
  base62: textForm('base62', /^[0-9A-Za-z]{11}$/),
  base36: textForm('base36', /^(?=.*[a-z])[0-9a-z]{13}$/),
  base32: textForm('base32', /^(?=.*[A-Z])[0-9A-Z]{13}$/),
  uuid: UUID,
  typeid: TYPE_ID,
  opaque: OPAQUE,
  'opaque-uuid': OPAQUE_UUID,
});

/** The formats, in the order the docs list them. */
export const ID_FORMATS: readonly IdFormat[] = Object.freeze(
  Object.keys(ID_FORMAT_TABLE) as IdFormat[],
);

/**
 * A `format` argument (a query parameter, say) checked against `allowed`.
 * @throws {InvalidArgumentError} (`argument: 'format'`) for anything else.
 */
export function parseIdFormat<F extends IdFormat>(raw: unknown, allowed: readonly F[]): F {
  if ((allowed as readonly unknown[]).includes(raw)) return raw as F;
  throw new InvalidArgumentError(`format must be one of ${allowed.join(', ')}`, 'format');
}

/**
 * The writer of `format` in `context`: the format checked against `allowed` and the context
 * checked by its entry, both before any ID is taken, so a bad argument costs none.
 * @throws {InvalidArgumentError} for a format not allowed, or a context it cannot write with.
 * The writer throws as {@link IdFormatEntry.encode}.
 */
export function idFormatWriter(
  format: unknown,
  context: IdFormatContext,
  allowed: readonly IdFormat[] = ID_FORMATS,
): (ids: readonly bigint[]) => string[] {
  const entry = ID_FORMAT_TABLE[parseIdFormat(format, allowed)];
  entry.check(context);
  return (ids) => entry.encode(ids, context);
}

/**
 * The form a text's shape tells, for texts in their canonical form: a UUID's 8-4-4-4-12 →
 * `uuid`; a prefix and `_`, or 26 lowercase characters → `typeid`; Leaf's decimal (no leading
 * zero, at most 19 digits) → `decimal`; 11 characters of `0-9A-Za-z` → `base62`; 13 with a
 * lowercase letter → `base36`, with an uppercase letter → `base32`; a letter and 11 of
 * `0-9A-Za-z` → `opaque`, a letter and 21 → `opaque-uuid`. `null` for anything else,
 * among them 13 digits with a leading zero (base36 or base32: say which).
 */
export function detectIdFormat(text: string): IdFormat | null {
  if (typeof text !== 'string') return null;
  return ID_FORMATS.find((name) => ID_FORMAT_TABLE[name].looksLike(text)) ?? null;
}

/**
 * Options of {@link decodeId}: the form, and the context it is read with. A numeric ID is
 * read as a snowflake ID only with `layout`; a UUIDv7 or TypeID is read with it (default:
 * Leaf's layout with Leaf's epoch); an opaque ID needs `opaque`.
 */
export interface DecodeIdOptions extends IdReadContext {
  /** The form of the text. @default told by its shape ({@link detectIdFormat}) */
  readonly format?: IdFormat;
}

/**
 * What `text` encodes (see {@link DecodedId}). A TypeID must carry a UUIDv7 to say more than
 * its prefix and UUID.
 * @throws {InvalidArgumentError} when the form cannot be told (`argument: 'format'`), or the
 *   text is not valid in its form (`text`, `id`, `uuid` or `typeId`), or a TypeID's UUID is
 *   not a UUIDv7 (`uuid`).
 * @throws {OpaqueDisabledError} / {@link OpaqueKeyRetiredError} as {@link IdFormatEntry.decode}.
 */
export function decodeId(text: string, options: DecodeIdOptions = {}): DecodedId {
  const format = options.format ?? detectIdFormat(text);
  if (format === null) {
    throw new InvalidArgumentError(
      `cannot tell the form of the text: name it (format: ${ID_FORMATS.join(', ')})`,
      'format',
    );
  }
  return ID_FORMAT_TABLE[parseIdFormat(format, ID_FORMATS)].decode(text, options);
}
