import { LeafError, LeafErrorCode } from './leaf.error';

/**
 * Errors of gapless series (docs/gapless.md). Each leaves the series as it was: a refused
 * reservation takes no number, a refused settlement changes no number and writes no record.
 */

/** No gapless series of that name (`leaf_gapless_series`). */
export class GaplessSeriesNotFoundError extends LeafError {
  readonly code = LeafErrorCode.GAPLESS_SERIES_NOT_FOUND;

  constructor(readonly series: string) {
    super(`No gapless series "${series}"`);
  }
}

/** A series could not be created: one of that name exists. Nothing was changed. */
export class GaplessSeriesExistsError extends LeafError {
  readonly code = LeafErrorCode.GAPLESS_SERIES_EXISTS;

  constructor(readonly series: string) {
    super(`Gapless series "${series}" already exists`);
  }
}

/** A confirm or void under a key that reserved nothing in the series. */
export class GaplessNotReservedError extends LeafError {
  readonly code = LeafErrorCode.GAPLESS_NOT_RESERVED;

  constructor(
    readonly series: string,
    readonly key: string,
  ) {
    super(`Series "${series}": no number was reserved under key "${key}"`);
  }
}

/** A confirm or void named a number that its key did not reserve. */
export class GaplessKeyMismatchError extends LeafError {
  readonly code = LeafErrorCode.GAPLESS_KEY_MISMATCH;

  constructor(
    readonly series: string,
    readonly key: string,
    /** The number asked for (decimal). */
    readonly number: string,
    /** The number the key holds (decimal). */
    readonly held: string,
  ) {
    super(`Series "${series}": key "${key}" holds number ${held}, not ${number}`);
  }
}

/**
 * The number was settled the other way already: a confirm of a voided number, a void of a
 * confirmed one (a confirmed number is corrected by a credit note in the corrections series,
 * never voided), or a reservation retried under a key whose number was voided.
 */
export class GaplessSettledError extends LeafError {
  readonly code = LeafErrorCode.GAPLESS_SETTLED;

  constructor(
    readonly series: string,
    readonly number: string,
    /** What the number is: `confirmed` or `voided`. */
    readonly state: string,
    reason?: string | null,
  ) {
    super(
      `Series "${series}": number ${number} is ${state}${reason ? ` (${reason})` : ''}; it cannot be settled again`,
    );
  }
}

/**
 * The reservation outlived its TTL (on the database's clock) and was voided with the reason
 * `expired`: reserve a new number under a new key.
 */
export class GaplessReservationExpiredError extends LeafError {
  readonly code = LeafErrorCode.GAPLESS_RESERVATION_EXPIRED;

  constructor(
    readonly series: string,
    readonly number: string,
  ) {
    super(`Series "${series}": the reservation of number ${number} expired and was voided`);
  }
}

/**
 * The series' lock was held by another transaction past the bounded wait (or a deadlock was
 * reported): nothing was taken; retry.
 */
export class GaplessBusyError extends LeafError {
  readonly code = LeafErrorCode.GAPLESS_BUSY;
  override readonly retryAfterMs = 1000;

  constructor(
    readonly series: string,
    waitMs: number,
    options?: { cause?: unknown },
  ) {
    super(`Series "${series}": its lock was not free within ${waitMs} ms; retry`, options);
  }
}
