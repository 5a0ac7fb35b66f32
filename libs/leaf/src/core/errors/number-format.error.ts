import { LeafError, LeafErrorCode } from './leaf.error';

/** The tag has no business-number format (`leaf_number_format`). Nothing was issued. */
export class NumberFormatNotFoundError extends LeafError {
  readonly code = LeafErrorCode.NUMBER_FORMAT_NOT_FOUND;

  constructor(readonly tag: string) {
    super(`Tag "${tag}" has no business-number format`);
  }
}

/** A format could not be defined: the tag has one already. Nothing was changed. */
export class NumberFormatExistsError extends LeafError {
  readonly code = LeafErrorCode.NUMBER_FORMAT_EXISTS;

  constructor(readonly tag: string) {
    super(`Tag "${tag}" already has a business-number format`);
  }
}

/**
 * The period's counter outgrew the format's width: the number would be wider than `width`
 * digits. Never served wider or wrapped; widen the format (`width` may only grow) or wait for
 * the next period.
 */
export class NumberOverflowError extends LeafError {
  readonly code = LeafErrorCode.NUMBER_OVERFLOW;

  constructor(
    readonly tag: string,
    /** The period (`20261204`, `202612`, `2026`; empty without a reset). */
    readonly period: string,
    /** The counter that did not fit. */
    readonly counter: bigint,
    readonly width: number,
  ) {
    super(
      `Tag "${tag}": counter ${counter} of period "${period}" does not fit in ${width} digits; widen the format or wait for the next period`,
    );
  }
}
