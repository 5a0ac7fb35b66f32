/**
 * The text of a business number and its decoding: `prefix`, the date part and the counter,
 * zero-padded to `width`, joined by the separator (empty parts left out):
 * `ORD-20261204-000123`. A counter wider than `width` is an error, never a wider number.
 */
import { InvalidArgumentError } from '../errors/invalid-argument.error';
import { NumberOverflowError } from '../errors/number-format.error';
import { counterTag, formatUnit, KEY_LENGTH, type NumberFormat } from './number-format';

/** What a business number says, given its tag's format. */
export interface DecodedNumber {
  readonly tag: string;
  readonly mode: NumberFormat['mode'];
  /** The date part's key (`20261204`), `null` without one. */
  readonly period: string | null;
  /** The `leaf_alloc` row the counter came from (`orders:20261204`; the tag without a reset). */
  readonly counterTag: string;
  readonly counter: bigint;
}

/** `'000'` … `'999'`: the last three digits of a counter. */
const LOW_DIGITS: readonly string[] = Object.freeze(
  Array.from({ length: 1000 }, (_, i) => String(i).padStart(3, '0')),
);

/**
 * Prints the numbers of one format. `head(period)` is computed once per period; below 2^53 a
 * counter is printed as the cached text of its thousands plus one of {@link LOW_DIGITS}, a
 * concatenation (consecutive counters share their thousands).
 */
export class NumberPrinter {
  /** `10^width`: the first counter that does not fit. */
  readonly limit: bigint;
  /** Widths of 4..15 digits: every counter below the limit is an exact double. */
  private readonly byThousands: boolean;
  /** {@link limit} as a double (exact for those widths). */
  private readonly limitNumber: number;
  private lastHead = '';
  private lastThousands = -1;
  private lastPrefix = '';

  constructor(readonly format: NumberFormat) {
    this.limit = 10n ** BigInt(format.width);
    this.byThousands = format.width >= 4 && format.width <= 15;
    this.limitNumber = 10 ** format.width;
  }

  /** Everything before the counter for the date part `period` (`''` without a date part). */
  head(period: string): string {
    const { prefix, separator } = this.format;
    const parts = [prefix, this.format.datePattern === null ? '' : period].filter((p) => p !== '');
    return parts.length === 0 ? '' : parts.join(separator) + separator;
  }

  /**
   * The number `head` + the counter.
   * @throws {NumberOverflowError} when `counter` has more than `width` digits.
   */
  print(head: string, period: string, counter: bigint): string {
    if (!this.byThousands) {
      if (counter >= this.limit || counter < 0n) throw this.overflow(period, counter);
      return head + counter.toString().padStart(this.format.width, '0');
    }
    // Number() rounds monotonically and the limit (at most 10^15 < 2^53) is exact, so the
    // comparison is exact, and so is every counter below it.
    const value = Number(counter);
    if (value >= this.limitNumber || value < 0) throw this.overflow(period, counter);
    const low = value % 1000;
    const thousands = (value - low) / 1000;
    if (thousands !== this.lastThousands || head !== this.lastHead) {
      this.lastHead = head;
      this.lastThousands = thousands;
      this.lastPrefix = head + String(thousands).padStart(this.format.width - 3, '0');
    }
    return this.lastPrefix + LOW_DIGITS[low];
  }

  /**
   * The numbers of `counters`, in order.
   * @throws {NumberOverflowError} when one has more than `width` digits.
   */
  printAll(head: string, period: string, counters: readonly bigint[]): string[] {
    return counters.map((counter) => this.print(head, period, counter));
  }

  private overflow(period: string, counter: bigint): NumberOverflowError {
    return new NumberOverflowError(this.format.tag, period, counter, this.format.width);
  }
}

/**
 * What `text` says under `format`: its period and counter.
 * @throws {InvalidArgumentError} when `text` is not a number of this format.
 */
export function decodeNumber(format: NumberFormat, text: string): DecodedNumber {
  const unit = formatUnit(format);
  const dateLength = format.datePattern === null || unit === null ? 0 : KEY_LENGTH[unit];
  const invalid = () =>
    new InvalidArgumentError(`"${String(text)}" is not a number of tag "${format.tag}"`, 'number');
  if (typeof text !== 'string') throw invalid();
  let rest = text;
  if (format.prefix !== '') {
    if (!rest.startsWith(format.prefix + format.separator)) throw invalid();
    rest = rest.slice(format.prefix.length + format.separator.length);
  }
  let period: string | null = null;
  if (dateLength > 0) {
    period = rest.slice(0, dateLength);
    if (!/^\d+$/.test(period) || period.length !== dateLength) throw invalid();
    if (!rest.startsWith(format.separator, dateLength)) throw invalid();
    rest = rest.slice(dateLength + format.separator.length);
  }
  if (rest.length !== format.width || !/^\d+$/.test(rest)) throw invalid();
  const counter = BigInt(rest);
  // Counters start at 1 (a row's first ID): a counter of 0 was never issued.
  if (counter === 0n) throw invalid();
  return {
    tag: format.tag,
    mode: format.mode,
    period,
    counterTag: counterTag(format, period ?? ''),
    counter,
  };
}
