import { InvalidArgumentError } from '../core/errors/invalid-argument.error';
import {
  NumberFormatExistsError,
  NumberFormatNotFoundError,
} from '../core/errors/number-format.error';
import type { NumberFormat } from '../core/numbers/number-format';
import type { NumberFormatStore } from '../core/numbers/number-format-store.port';

/**
 * An in-memory `leaf_number_format` with a database clock tests set (`setNow`, `advance`,
 * `followClock`), or that follows `Date.now()` when never set. `failClock()` makes the clock's next reads fail;
 * `clockReads` counts them.
 */
export class InMemoryNumberFormatStore implements NumberFormatStore {
  private readonly formats = new Map<string, NumberFormat>();
  private now: number | null = null;
  private source: (() => number) | null = null;
  private clockFailures = 0;
  /** Reads of the database's clock so far. */
  clockReads = 0;

  listFormats(): Promise<NumberFormat[]> {
    return Promise.resolve([...this.formats.values()].sort((a, b) => (a.tag < b.tag ? -1 : 1)));
  }

  findFormat(tag: string): Promise<NumberFormat | null> {
    return Promise.resolve(this.formats.get(tag) ?? null);
  }

  createFormat(format: NumberFormat): Promise<NumberFormat> {
    if (this.formats.has(format.tag)) {
      return Promise.reject(new NumberFormatExistsError(format.tag));
    }
    this.formats.set(format.tag, format);
    return Promise.resolve(format);
  }

  updateFormat(tag: string, width: number, description: string | null): Promise<NumberFormat> {
    const format = this.formats.get(tag);
    if (!format) return Promise.reject(new NumberFormatNotFoundError(tag));
    if (format.width > width) {
      return Promise.reject(new InvalidArgumentError('width may only grow', 'width'));
    }
    const updated = { ...format, width, description };
    this.formats.set(tag, updated);
    return Promise.resolve(updated);
  }

  databaseNow(): Promise<number> {
    this.clockReads++;
    if (this.clockFailures > 0) {
      this.clockFailures--;
      return Promise.reject(new Error('the database is down'));
    }
    return Promise.resolve(this.source?.() ?? this.now ?? Date.now());
  }

  /** The database's clock follows `source` (a test's fake time) from now on. */
  followClock(source: () => number): this {
    this.source = source;
    return this;
  }

  /** Sets the database's clock (epoch ms). */
  setNow(ms: number): this {
    this.now = ms;
    return this;
  }

  /** Moves the database's clock. */
  advance(ms: number): this {
    this.now = (this.now ?? Date.now()) + ms;
    return this;
  }

  /** The next `count` reads of the clock fail. */
  failClock(count = 1): this {
    this.clockFailures = count;
    return this;
  }
}
