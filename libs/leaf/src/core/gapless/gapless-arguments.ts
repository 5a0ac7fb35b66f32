/**
 * The arguments of gapless calls, checked before anything is sent or queried: by
 * `GaplessNumberService` and by the remote client alike.
 */
import { assertValidText } from '../arguments';
import { InvalidArgumentError } from '../errors/invalid-argument.error';

/** Longest void reason (the column's width). */
export const MAX_GAPLESS_REASON = 256;

/**
 * A number given as a bigint or a decimal string, positive and within the column.
 * @throws {InvalidArgumentError} otherwise.
 */
export function gaplessNumberArgument(number: unknown): bigint {
  if (typeof number === 'bigint' && number > 0n && number <= 9_223_372_036_854_775_807n)
    return number;
  if (typeof number === 'string' && /^[1-9]\d{0,18}$/.test(number)) return BigInt(number);
  throw new InvalidArgumentError('number must be a positive decimal integer', 'number');
}

/** @throws {InvalidArgumentError} unless `reason` is 1..256 printable characters, not blank. */
export function assertGaplessReason(reason: unknown): asserts reason is string {
  assertValidText(reason, 'reason', MAX_GAPLESS_REASON);
  if (reason.trim() === '') throw new InvalidArgumentError('reason must not be empty', 'reason');
}

/** @throws {InvalidArgumentError} unless `ttlMs` is an integer in 1..`max`. */
export function assertGaplessTtl(ttlMs: unknown, max: number): asserts ttlMs is number {
  if (!Number.isSafeInteger(ttlMs) || (ttlMs as number) < 1 || (ttlMs as number) > max)
    throw new InvalidArgumentError(`ttlMs must be an integer in 1..${max}`, 'ttlMs');
}
