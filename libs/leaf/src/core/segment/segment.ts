/**
 * One half-open range `[start, max)` owned by this instance, as it arrived from the store.
 * The buffer serves it through its own cursor; `preloadAt` is the ID from which the next
 * range is due.
 */
export class Segment {
  constructor(
    /** First ID of the range. */
    readonly start: bigint,
    /** Exclusive end of the range. */
    readonly max: bigint,
    /** Length of the range (the step applied when it was allocated). */
    readonly step: number,
    /** Once the cursor reaches this, the next range is due. */
    readonly preloadAt: bigint,
  ) {}

  /**
   * Builds the segment for a committed allocation: `[maxId - appliedStep, maxId)`.
   * `preloadThreshold` is the fraction of the step that may remain before the next load starts.
   */
  static fromAllocation(maxId: bigint, appliedStep: number, preloadThreshold: number): Segment {
    const start = maxId - BigInt(appliedStep);
    const keep = BigInt(Math.floor(appliedStep * preloadThreshold));
    return new Segment(start, maxId, appliedStep, maxId - keep);
  }
}
