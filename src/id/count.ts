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
