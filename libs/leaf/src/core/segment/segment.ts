import type { AllocatedRange } from './leaf-alloc-store.port';
import { firstInClass, idsFrom } from './residue-class';

/**
 * One half-open range `[start, max)` owned by this instance, as it arrived from the store.
 * The buffer serves it through its own cursor, `stride` apart (1: every ID; N: the IDs of the
 * range's residue class, docs/design.md "Several databases per tag"); `preloadAt` is the ID
 * from which the next range is due.
 */
export class Segment {
  /** IDs the segment serves. */
  readonly count: number;

  constructor(
    /** First ID served (the range's first ID in its residue class). */
    readonly start: bigint,
    /** Exclusive end of the range. */
    readonly max: bigint,
    /** Length of the range in ID space (the step applied when it was allocated). */
    readonly step: number,
    /** Once the cursor reaches this, the next range is due. */
    readonly preloadAt: bigint,
    /** Distance between two IDs served. */
    readonly stride: bigint = 1n,
    /** The database that granted it (several databases), for the hand-back. */
    readonly source?: number,
  ) {
    this.count = stride === 1n ? step : idsFrom(start, max, stride);
  }

  /**
   * Builds the segment for a committed allocation: `[maxId - appliedStep, maxId)`, served in
   * the residue class `residue (mod modulus)`. `preloadThreshold` is the fraction of the step
   * that may remain before the next load starts.
   */
  static fromAllocation(range: AllocatedRange, preloadThreshold: number): Segment {
    const { maxId, appliedStep, modulus = 1, residue = 0, source } = range;
    const stride = BigInt(modulus);
    const start = firstInClass(maxId - BigInt(appliedStep), stride, BigInt(residue));
    const keep = BigInt(Math.floor(appliedStep * preloadThreshold));
    return new Segment(start, maxId, appliedStep, maxId - keep, stride, source);
  }
}
