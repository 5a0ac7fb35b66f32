import { LeafError, LeafErrorCode } from './leaf.error';

/**
 * An ID route was asked for a tag that carries a business-number format (or for one of its
 * period counter rows, `orders:20261204`): those rows count numbers and are served only as
 * numbers (`/api/{mode}/number/{tag}`), or a range of a million would make every later number
 * overflow its width. Nothing was allocated.
 */
export class TagReservedError extends LeafError {
  readonly code = LeafErrorCode.TAG_RESERVED;

  constructor(
    readonly tag: string,
    /** The tag whose format reserves it (`tag` itself, or the base of a period counter row). */
    readonly format: string,
  ) {
    super(
      tag === format
        ? `Tag "${tag}" has a business-number format: it is served only as numbers (/api/{mode}/number/${tag})`
        : `Tag "${tag}" counts the business numbers of "${format}": it is served only as numbers (/api/{mode}/number/${format})`,
    );
  }
}
