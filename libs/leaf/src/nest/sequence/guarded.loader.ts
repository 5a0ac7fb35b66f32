import type { Logger } from '@nestjs/common';
import { AllocationRegressedError } from '../../core/errors/allocation.error';
import type { LeafAllocStore } from '../../core/segment/leaf-alloc-store.port';
import { RangeGuard } from '../../core/segment/range-guard';
import type { RangeLoader } from '../../core/segment/segment-buffer';
import { logRangeRefused, logRangeRepaired } from '../segment/allocation-log';

/**
 * Per-instance guard of the ranges (as segment mode's, docs/design.md "Segment mode"): a range
 * below one this instance already holds is refused, whatever the high-water mark says; a
 * repaired one is logged.
 */
export function guardedLoader(store: LeafAllocStore, logger: Logger): RangeLoader {
  const guard = new RangeGuard();
  return async (tag, step) => {
    // Taken before the transaction: every range held now was committed before it.
    const floor = guard.floor(tag);
    const range = await store.allocate(tag, step);
    logRangeRepaired(logger, range);
    try {
      guard.admit(range, floor);
    } catch (error) {
      if (error instanceof AllocationRegressedError) logRangeRefused(logger, error);
      throw error;
    }
    return range;
  };
}
