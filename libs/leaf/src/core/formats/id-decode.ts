/**
 * What a text ID encodes, whatever its form: the number of a decimal, base62, base36 or base32
 * ID (and, given the snowflake layout, its fields), the time, worker and counter of a UUIDv7 or
 * a TypeID made from a snowflake ID. Pure functions.
 */
import { InvalidArgumentError } from '../errors/invalid-argument.error';
import { LEAF_ID_PATTERN, parseLeafId } from '../leaf-id-text';
import { DEFAULT_SNOWFLAKE_EPOCH, SnowflakeLayout } from '../snowflake/snowflake-layout';
import { ID_TEXT_FORMS, decodeIdText, type IdTextForm } from './id-text-forms';
import { decodeUuidV7 } from './snowflake-uuid-v7';
import { parseTypeId } from './type-id';

/** Every text form of an ID: Leaf's decimal, the fixed-width forms, UUIDv7 and TypeID. */
export type IdFormat = 'decimal' | IdTextForm | 'uuid' | 'typeid';

/** The forms, in the order the docs list them. */
export const ID_FORMATS: readonly IdFormat[] = Object.freeze([
  'decimal',
  ...ID_TEXT_FORMS,
  'uuid',
  'typeid',
]);

/**
 * A `format` argument (a query parameter, say) checked against `allowed`.
 * @throws {InvalidArgumentError} (`argument: 'format'`) for anything else.
 */
export function parseIdFormat<F extends IdFormat>(raw: unknown, allowed: readonly F[]): F {
  if ((allowed as readonly unknown[]).includes(raw)) return raw as F;
  throw new InvalidArgumentError(`format must be one of ${allowed.join(', ')}`, 'format');
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
  /** The UUID of a UUIDv7 or a TypeID; `null` otherwise. */
  readonly uuid: string | null;
  /** The prefix of a TypeID (may be empty); `null` otherwise. */
  readonly prefix: string | null;
  /**
   * Time, data centre, worker and sequence: for a numeric form only with a layout given (the
   * number alone does not say which mode issued it), for a UUIDv7 or TypeID always.
   */
  readonly fields: DecodedIdFields | null;
}

/** Options of {@link decodeId}. */
export interface DecodeIdOptions {
  /** The form of the text. @default told by its shape ({@link detectIdFormat}) */
  readonly format?: IdFormat;
  /**
   * The snowflake layout the ID was made with. A numeric ID is read as a snowflake ID only
   * when it is given; a UUIDv7 or TypeID is read with it.
   * @default none for numeric forms; Leaf's layout with Leaf's epoch for UUIDv7 and TypeID
   */
  readonly layout?: SnowflakeLayout | null;
}

const TYPE_ID_SHAPE = /^([a-z_]*_)?[0-9a-z]{26}$/;

/**
 * The form a text's shape tells, for texts in their canonical form: a UUID's 8-4-4-4-12 →
 * `uuid`; a prefix and `_`, or 26 lowercase characters → `typeid`; Leaf's decimal (no leading
 * zero, at most 19 digits) → `decimal`; 11 characters of `0-9A-Za-z` → `base62`; 13 with a
 * lowercase letter → `base36`, with an uppercase letter → `base32`. `null` for anything else,
 * among them 13 digits with a leading zero (base36 or base32: say which).
 */
export function detectIdFormat(text: string): IdFormat | null {
  if (typeof text !== 'string') return null;
  if (text.length === 36 && /^[0-9a-fA-F-]+$/.test(text)) return 'uuid';
  if (TYPE_ID_SHAPE.test(text)) return 'typeid';
  if (LEAF_ID_PATTERN.test(text)) return 'decimal';
  if (text.length === 11 && /^[0-9A-Za-z]+$/.test(text)) return 'base62';
  if (text.length === 13 && /^[0-9a-z]*[a-z][0-9a-z]*$/.test(text)) return 'base36';
  if (text.length === 13 && /^[0-9A-Z]*[A-Z][0-9A-Z]*$/.test(text)) return 'base32';
  return null;
}

/** Leaf's layout and epoch: what UUIDv7 and TypeID are read with unless told otherwise. */
const LEAF_DEFAULT_LAYOUT = new SnowflakeLayout(DEFAULT_SNOWFLAKE_EPOCH);

function fieldsOfUuid(
  format: IdFormat,
  uuid: string,
  prefix: string | null,
  layout: SnowflakeLayout,
): DecodedId {
  const decoded = decodeUuidV7(uuid, layout);
  return {
    format,
    id: decoded.snowflakeId,
    uuid,
    prefix,
    fields: {
      timestamp: decoded.timestamp,
      date: decoded.date,
      dataCenterId: decoded.dataCenterId,
      workerId: decoded.workerId,
      sequence: decoded.counter,
    },
  };
}

/**
 * What `text` encodes (see {@link DecodedId}). A TypeID must carry a UUIDv7 to say more than
 * its prefix and UUID.
 * @throws {InvalidArgumentError} when the form cannot be told (`argument: 'format'`), or the
 *   text is not valid in its form (`text`, `id`, `uuid` or `typeId`), or a TypeID's UUID is
 *   not a UUIDv7 (`uuid`).
 */
export function decodeId(text: string, options: DecodeIdOptions = {}): DecodedId {
  const format = options.format ?? detectIdFormat(text);
  if (format === null) {
    throw new InvalidArgumentError(
      `cannot tell the form of the text: name it (format: ${ID_FORMATS.join(', ')})`,
      'format',
    );
  }
  const layout = options.layout ?? null;
  const checked = parseIdFormat(format, ID_FORMATS);
  switch (checked) {
    case 'uuid':
      return fieldsOfUuid(format, text, null, layout ?? LEAF_DEFAULT_LAYOUT);
    case 'typeid': {
      const { prefix, uuid } = parseTypeId(text);
      return fieldsOfUuid(format, uuid, prefix, layout ?? LEAF_DEFAULT_LAYOUT);
    }
    default: {
      const id = checked === 'decimal' ? parseLeafId(text, 'text') : decodeIdText(text, checked);
      const fields = layout === null ? null : layout.decode(id);
      return {
        format,
        id,
        uuid: null,
        prefix: null,
        fields: fields && {
          timestamp: fields.timestamp,
          date: fields.date,
          dataCenterId: fields.dataCenterId,
          workerId: fields.workerId,
          sequence: fields.sequence,
        },
      };
    }
  }
}
