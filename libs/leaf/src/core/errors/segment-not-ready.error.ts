import { LeafError, LeafErrorCode } from './leaf.error';

/**
 * Both segments of a tag are used up and the next range did not arrive in time
 * (Leaf's `-3`, "two segments are null"). Retrying shortly usually succeeds.
 */
export class SegmentNotReadyError extends LeafError {
  readonly code = LeafErrorCode.SEGMENT_NOT_READY;
  override readonly leafCode = -3;
  override readonly retryAfterMs = 1000;

  constructor(
    readonly tag: string,
    options?: { cause?: unknown },
  ) {
    super(`No ID range is ready for tag "${tag}"`, options);
  }
}
