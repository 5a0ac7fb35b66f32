import { InvalidArgumentError } from './errors/invalid-argument.error';

/** Keys (business tags): 1-128 characters of letters, digits, `_`, `-`, `.` and `:`. */
export const KEY_PATTERN = /^[A-Za-z0-9_.:-]{1,128}$/;

/**
 * Checks a business tag / key before it touches any state.
 * @throws {InvalidArgumentError} when the key is empty, too long or has other characters.
 */
export function assertValidKey(key: unknown): asserts key is string {
  if (typeof key !== 'string' || !KEY_PATTERN.test(key)) {
    throw new InvalidArgumentError(
      'key must be 1-128 characters of letters, digits, "_", "-", "." or ":"',
      'key',
    );
  }
}

/**
 * Checks a batch size.
 * @throws {InvalidArgumentError} unless `count` is an integer in `1..max`.
 */
export function assertValidCount(count: unknown, max: number): asserts count is number {
  if (typeof count !== 'number' || !Number.isInteger(count) || count < 1 || count > max) {
    throw new InvalidArgumentError(`count must be an integer in 1..${max}`, 'count');
  }
}
