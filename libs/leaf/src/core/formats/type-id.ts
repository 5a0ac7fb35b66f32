/**
 * TypeID (typeid spec v0.3.0): `prefix_` and the 128 bits of a UUID in 26 characters of
 * lowercase Crockford base32 (`0123456789abcdefghjkmnpqrstvwxyz`, two zero bits in front, so
 * the first character is at most `7`); no separator with an empty prefix. The alphabet is in
 * ASCII order and the width fixed, so TypeIDs of one prefix sort as their UUIDs. Pure functions.
 */
import { InvalidArgumentError } from '../errors/invalid-argument.error';
import { canonicalUuid } from './snowflake-uuid-v7';

/** A TypeID prefix: empty, or up to 63 of `a-z` and `_`, starting and ending with a letter. */
export const TYPE_ID_PREFIX_PATTERN = /^([a-z]([a-z_]{0,61}[a-z])?)?$/;

const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';
/** Character code (0-127) → value; strict: no uppercase, no Crockford aliases. */
const VALUES: Readonly<Int8Array> = (() => {
  const values = new Int8Array(128).fill(-1);
  for (let i = 0; i < ALPHABET.length; i++) values[ALPHABET.charCodeAt(i)] = i;
  return values;
})();
/** Character code (0-127) → value of a hex digit (either case), for a text already checked. */
const HEX_VALUES: Readonly<Uint8Array> = (() => {
  const values = new Uint8Array(128);
  for (let i = 0; i < 16; i++) {
    values['0123456789abcdef'.charCodeAt(i)] = i;
    values['0123456789ABCDEF'.charCodeAt(i)] = i;
  }
  return values;
})();
/** Any UUID's text, 8-4-4-4-12 hex digits (either case when read; written lowercase). */
const UUID_TEXT = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;
const SUFFIX_LENGTH = 26;

/** A TypeID's parts. */
export interface ParsedTypeId {
  /** The type prefix (may be empty). */
  readonly prefix: string;
  /** The UUID, canonical lowercase 8-4-4-4-12 (any version: the spec lets users encode others). */
  readonly uuid: string;
}

/** Whether `prefix` is a valid TypeID prefix ({@link TYPE_ID_PREFIX_PATTERN}). */
export function isTypeIdPrefix(prefix: unknown): prefix is string {
  return typeof prefix === 'string' && TYPE_ID_PREFIX_PATTERN.test(prefix);
}

/**
 * Checks a prefix before anything is issued for it.
 * @throws {InvalidArgumentError} unless `prefix` is a valid TypeID prefix.
 */
export function assertTypeIdPrefix(prefix: unknown): asserts prefix is string {
  if (!isTypeIdPrefix(prefix)) {
    throw new InvalidArgumentError(
      'prefix must be empty or up to 63 characters of a-z and "_", starting and ending with a letter',
      'prefix',
    );
  }
}

function encodeSuffix(bytes: Uint8Array): string {
  let out = ALPHABET[bytes[0]! >>> 5]!;
  let acc = bytes[0]! & 31;
  let bits = 5;
  for (let i = 1; i < 16; i++) {
    acc = (acc << 8) | bytes[i]!;
    bits += 8;
    while (bits >= 5) {
      bits -= 5;
      out += ALPHABET[(acc >>> bits) & 31]!;
    }
    acc &= (1 << bits) - 1;
  }
  return out;
}

/** The 16 bytes of a 26-character suffix, or `null` when it is not one. */
function decodeSuffix(suffix: string): Uint8Array | null {
  if (suffix.length !== SUFFIX_LENGTH) return null;
  const valueAt = (i: number) => {
    const code = suffix.charCodeAt(i);
    return code < 128 ? VALUES[code]! : -1;
  };
  let acc = valueAt(0);
  // Above 7 the value would need 129 bits or more.
  if (acc < 0 || acc > 7) return null;
  let bits = 3;
  const bytes = new Uint8Array(16);
  let k = 0;
  for (let i = 1; i < SUFFIX_LENGTH; i++) {
    const value = valueAt(i);
    if (value < 0) return null;
    acc = (acc << 5) | value;
    bits += 5;
    if (bits >= 8) {
      bits -= 8;
      bytes[k++] = (acc >>> bits) & 0xff;
      acc &= (1 << bits) - 1;
    }
  }
  return bytes;
}

/**
 * The TypeID of `uuid` with `prefix`: `typeIdFromUuid('user', uuid)` is `user_01h…`, and with
 * an empty prefix the 26 characters alone.
 * @throws {InvalidArgumentError} for an invalid prefix (`argument: 'prefix'`) or a text that is
 *   not a UUID's 8-4-4-4-12 hex digits (`argument: 'uuid'`).
 */
export function typeIdFromUuid(prefix: string, uuid: string): string {
  assertTypeIdPrefix(prefix);
  if (typeof uuid !== 'string' || !UUID_TEXT.test(uuid)) {
    throw new InvalidArgumentError('uuid must be 8-4-4-4-12 hexadecimal digits', 'uuid');
  }
  const bytes = new Uint8Array(16);
  for (let i = 0, at = 0; i < 16; i++, at += 2) {
    if (at === 8 || at === 13 || at === 18 || at === 23) at++; // the dashes
    bytes[i] = (HEX_VALUES[uuid.charCodeAt(at)]! << 4) | HEX_VALUES[uuid.charCodeAt(at + 1)]!;
  }
  const suffix = encodeSuffix(bytes);
  return prefix === '' ? suffix : `${prefix}_${suffix}`;
}

/** The parts of a TypeID, or `null` when `text` is not one. */
function tryParse(text: unknown): ParsedTypeId | null {
  if (typeof text !== 'string') return null;
  const at = text.lastIndexOf('_');
  // "_suffix" (a separator without a prefix) is refused by the prefix check: "" before a "_".
  const prefix = at < 0 ? '' : text.slice(0, at);
  if ((at >= 0 && prefix === '') || !isTypeIdPrefix(prefix)) return null;
  const bytes = decodeSuffix(text.slice(at + 1));
  return bytes === null
    ? null
    : { prefix, uuid: canonicalUuid(Buffer.from(bytes.buffer).toString('hex')) };
}

/**
 * The prefix and UUID of a TypeID (spec v0.3.0: the suffix strictly lowercase, no hyphens, no
 * Crockford aliases, first character at most `7`).
 * @throws {InvalidArgumentError} (`argument: 'typeId'`) when `text` is not a TypeID.
 */
export function parseTypeId(text: string): ParsedTypeId {
  const parsed = tryParse(text);
  if (parsed === null) {
    throw new InvalidArgumentError(
      'typeId must be a valid prefix, "_" and 26 characters of 0-9a-z without i, l, o, u, the first at most 7 (no "_" with an empty prefix)',
      'typeId',
    );
  }
  return parsed;
}

/** Whether `text` is a TypeID (what {@link parseTypeId} accepts). */
export function isTypeId(text: unknown): boolean {
  return tryParse(text) !== null;
}
