import { InvalidArgumentError } from 'nestjs-leaf/errors';
import { MAX_INT64 } from 'nestjs-leaf/ports';

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

/** Most IDs `GET /api/encode/{format}` writes in one request. */
export const MAX_ENCODE_IDS = 1000;

/**
 * Parses the `ids` query parameter of the encode route: 1 to {@link MAX_ENCODE_IDS} decimal
 * IDs in 1..2^63-1, comma-separated, nothing else.
 * @throws {InvalidArgumentError} (`ids`) for anything else.
 */
export function parseIdList(raw: unknown): bigint[] {
  const ids = typeof raw === 'string' && raw.length <= MAX_ENCODE_IDS * 20 ? raw.split(',') : [];
  if (
    ids.length === 0 ||
    ids.length > MAX_ENCODE_IDS ||
    !ids.every((id) => /^[1-9]\d{0,18}$/.test(id) && BigInt(id) <= MAX_INT64)
  ) {
    throw new InvalidArgumentError(
      `ids must be 1 to ${MAX_ENCODE_IDS} decimal IDs in 1..2^63-1, comma-separated`,
      'ids',
    );
  }
  return ids.map(BigInt);
}
