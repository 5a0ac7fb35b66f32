import { InvalidArgumentError } from './errors/invalid-argument.error';

/** The largest ID (a signed 64-bit integer): 2^63 − 1. */
export const MAX_LEAF_ID = 2n ** 63n - 1n;

/** Whether `value` is an ID: a bigint in 1..2^63 − 1. */
export function isLeafId(value: unknown): value is bigint {
  return typeof value === 'bigint' && value >= 1n && value <= MAX_LEAF_ID;
}

/**
 * An ID in its wire form: a positive decimal integer without sign or leading zeros, at most 19
 * digits. The bound 2^63 − 1 itself is checked by {@link parseLeafId} (a pattern cannot).
 */
export const LEAF_ID_PATTERN = /^[1-9][0-9]{0,18}$/;

/**
 * Reads an ID from its decimal text, never through a JavaScript number.
 * @param argument the argument's name in the error (`id` by default).
 * @throws {InvalidArgumentError} unless `text` is a positive decimal integer of at most
 *   2^63 − 1 without sign, spaces or leading zeros.
 */
export function parseLeafId(text: unknown, argument = 'id'): bigint {
  if (typeof text === 'string' && LEAF_ID_PATTERN.test(text)) {
    const id = BigInt(text);
    if (id <= MAX_LEAF_ID) return id;
  }
  throw new InvalidArgumentError(
    `${argument} must be a positive decimal integer of at most 9223372036854775807 (2^63 - 1), without sign or leading zeros`,
    argument,
  );
}
