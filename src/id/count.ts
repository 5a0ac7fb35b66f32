import type { LeafMode } from 'nestjs-leaf';
import { InvalidArgumentError } from 'nestjs-leaf/errors';
import { MAX_INT64 } from 'nestjs-leaf/ports';
import { MAX_ENCODE_IDS } from 'nestjs-leaf/formats';
import { parseLeafId } from 'nestjs-leaf/http';

/**
 * Parses the `count` query parameter strictly: decimal digits only, no sign, exponent,
 * fraction or whitespace. The range (1..cap) is checked by the library.
 * @throws {InvalidArgumentError} for anything else, including a missing value.
 */
export function parseCount(raw: unknown): number {
  if (typeof raw !== 'string' || !/^\d{1,9}$/.test(raw)) {
    throw new InvalidArgumentError('count must be a positive integer', 'count');
  }
  return Number(raw);
}

/**
 * Parses the optional `after` query parameter of the range route: a decimal ID, at most
 * 2^63-1, or absent.
 * @throws {InvalidArgumentError} for anything else.
 */
export function parseAfter(raw: unknown): bigint | undefined {
  if (raw === undefined) return undefined;
  if (typeof raw !== 'string' || !/^\d{1,19}$/.test(raw) || BigInt(raw) > MAX_INT64) {
    throw new InvalidArgumentError('after must be a decimal ID in 0..2^63-1', 'after');
  }
  return BigInt(raw);
}

/**
 * Parses the `ids` query parameter of the encode route: 1 to `MAX_ENCODE_IDS` decimal IDs
 * (Leaf's form, `parseLeafId`), comma-separated, nothing else.
 * @throws {InvalidArgumentError} (`ids`) for anything else.
 */
export function parseIdList(raw: unknown): bigint[] {
  const ids = typeof raw === 'string' ? raw.split(',', MAX_ENCODE_IDS + 1) : [];
  if (ids.length === 0 || ids.length > MAX_ENCODE_IDS) {
    throw new InvalidArgumentError(
      `ids must be 1 to ${MAX_ENCODE_IDS} decimal IDs, comma-separated`,
      'ids',
    );
  }
  return ids.map((id) => parseLeafId(id, 'ids'));
}

/** Every mode, in the order the library registers them. */
export const LEAF_MODES: readonly LeafMode[] = ['segment', 'snowflake', 'sequence'];

/** Whether `raw` (a query parameter, a CLI option) is a mode's name. */
export function isLeafMode(raw: unknown): raw is LeafMode {
  return (LEAF_MODES as readonly unknown[]).includes(raw);
}
