import { InvalidArgumentError } from './errors/invalid-argument.error';

/** Keys (business tags): 1-128 characters of letters, digits, `_`, `-`, `.` and `:`. */
export const KEY_PATTERN = /^[A-Za-z0-9_.:-]{1,128}$/;

/**
 * Control characters refused in free text: C0 (NUL included), DEL and C1. A database column
 * may refuse some (PostgreSQL refuses NUL) and a log line or a terminal interprets others.
 */
// eslint-disable-next-line no-control-regex
const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f-\u009f]/;
/** A high surrogate without its low half, or a low one without its high half. */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/**
 * Checks a business tag / key before it touches any state: a database, a metric label, a map.
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
 * Checks free text (a description) before it reaches a database or a log line: a string of at
 * most `maxLength` UTF-16 code units, well-formed (no lone surrogate, which no UTF-8 column
 * can store), without control characters (NUL, C0, DEL, C1).
 * @throws {InvalidArgumentError} naming `argument` otherwise.
 */
export function assertValidText(
  text: unknown,
  argument: string,
  maxLength: number,
): asserts text is string {
  if (
    typeof text !== 'string' ||
    text.length > maxLength ||
    CONTROL_CHARACTERS.test(text) ||
    LONE_SURROGATE.test(text)
  ) {
    throw new InvalidArgumentError(
      `${argument} must be a string of at most ${maxLength} characters, without control characters or lone surrogates`,
      argument,
    );
  }
}

/** Checks a batch size. @throws {InvalidArgumentError} unless `count` is an integer in `1..max`. */
export function assertValidCount(count: unknown, max: number): asserts count is number {
  if (typeof count !== 'number' || !Number.isInteger(count) || count < 1 || count > max) {
    throw new InvalidArgumentError(`count must be an integer in 1..${max}`, 'count');
  }
}
