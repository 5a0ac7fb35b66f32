import { LeafError, LeafErrorCode } from './leaf.error';

/**
 * Who issued an ID cannot be told (docs/operations.md, "Who issued an ID"): no journalled
 * range of the tag holds it, no journalled claim of its worker ID covers its millisecond, or
 * the ID journal is off. `reason` says which.
 */
export class IdOriginUnknownError extends LeafError {
  readonly code = LeafErrorCode.ID_ORIGIN_UNKNOWN;

  constructor(
    readonly id: string,
    readonly reason: string,
  ) {
    super(`Who issued ${id} is not known: ${reason}`);
  }
}
