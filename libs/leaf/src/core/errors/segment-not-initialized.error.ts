import { LeafError, LeafErrorCode } from './leaf.error';

/** The tag list has never been loaded from the database (Leaf's `-1`, ID cache init false). */
export class SegmentNotInitializedError extends LeafError {
  readonly code = LeafErrorCode.SEGMENT_NOT_INITIALIZED;
  override readonly leafCode = -1;
  override readonly retryAfterMs = 1000;

  constructor(options?: { cause?: unknown }) {
    super('Segment mode has not loaded its tag list yet', options);
  }
}
