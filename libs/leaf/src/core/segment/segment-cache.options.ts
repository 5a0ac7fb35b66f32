import type { SegmentBufferOptions } from './segment-buffer';

/** Settings of a `SegmentCache`. */
export interface SegmentCacheOptions extends SegmentBufferOptions {
  /** At most this many range loads run at once, across keys. */
  readonly maxConcurrentLoads: number;
  /** Largest `count` of {@link SegmentCache.getIds}. */
  readonly maxBatchSize: number;
  /** Largest `count` of {@link SegmentCache.getRange}. Default: `maxBatchSize`. */
  readonly maxRangeCount?: number;
  /**
   * How long a key the database did not have is answered `TagNotFoundError` without asking
   * again (the negative cache). Default 5000 ms.
   */
  readonly unknownTagTtlMs?: number;
  /** Most keys the negative cache remembers (the least recently used is forgotten first). Default 10,000. */
  readonly unknownTagCacheSize?: number;
  /**
   * The ID journal (docs/design.md, "The ID journal"): every allocation carries this
   * instance's entry, which the store writes in the allocation's transaction. Default: none.
   */
  readonly journal?: { readonly instance: string } | null;
}
