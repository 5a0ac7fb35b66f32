import { InvalidArgumentError } from 'nestjs-leaf';

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
