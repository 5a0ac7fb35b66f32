/**
 * Where business-number formats live (`leaf_number_format`, migration
 * `CreateLeafNumberFormat1700000000005`) and where the database's clock is read: the one
 * database that holds the tags' `leaf_alloc` rows, so the clock that decides a period is the
 * clock every instance shares.
 */
import type { NumberFormat } from './number-format';

/** The formats' table and the database's clock. */
export interface NumberFormatStore {
  /**
   * Every format, ordered by tag.
   * @throws {AllocationError} when the table cannot be read.
   */
  listFormats(): Promise<NumberFormat[]>;
  /**
   * The format of `tag`, or `null`.
   * @throws {AllocationError} when the table cannot be read.
   */
  findFormat(tag: string): Promise<NumberFormat | null>;
  /**
   * Stores a format already checked by `checkNewNumberFormat`.
   * @returns the format as stored.
   * @throws {NumberFormatExistsError} when the tag has one (the row is left alone).
   * @throws {AllocationError} on any other database failure.
   */
  createFormat(format: NumberFormat): Promise<NumberFormat>;
  /**
   * Sets the width and description of `tag`'s format, only if its width is at most `width`
   * (the width never shrinks, whoever else writes).
   * @returns the format after the change.
   * @throws {NumberFormatNotFoundError} when the tag has none.
   * @throws {InvalidArgumentError} when its width is larger than `width` (nothing written).
   * @throws {AllocationError} on any other database failure.
   */
  updateFormat(tag: string, width: number, description: string | null): Promise<NumberFormat>;
  /**
   * The database's clock, in epoch milliseconds (one statement; never the host's clock).
   * @throws {AllocationError} when the database does not answer.
   */
  databaseNow(): Promise<number>;
}
