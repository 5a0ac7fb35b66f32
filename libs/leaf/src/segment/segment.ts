/**
 * One half-open range `[value, max)` owned by this instance. `value` is the next ID to hand
 * out; `preloadAt` is the value from which the next range should be loaded.
 */
export class Segment {
  /** Next ID to hand out. */
  value: bigint;

  constructor(
    /** First ID of the range. */
    readonly start: bigint,
    /** Exclusive end of the range. */
    readonly max: bigint,
    /** Length of the range (the step applied when it was allocated). */
    readonly step: number,
    /** Once `value` reaches this, the next range is due. */
    readonly preloadAt: bigint,
  ) {
    this.value = start;
  }

  /** IDs still available. */
  get remaining(): bigint {
    return this.max - this.value;
  }

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
