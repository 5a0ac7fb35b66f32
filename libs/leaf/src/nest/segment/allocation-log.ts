import type { Logger } from '@nestjs/common';
import type { AllocationRegressedError } from '../../core/errors/allocation.error';
import type { AllocatedRange } from '../../core/segment/leaf-alloc-store.port';

/**
 * The log line of an allocation the high-water mark repaired (segment and sequence mode):
 * every time, since `max_id` went back and the operator must find out why (a restored backup,
 * a hand edit, a lagging replica promoted); docs/operations.md, "max_id went back".
 */
export function logRangeRepaired(logger: Logger, range: AllocatedRange): void {
  const repair = range.repair;
  if (!repair) return;
  const start = range.maxId - BigInt(range.appliedStep);
  const message =
    `Tag "${range.tag}": max_id ${repair.maxId} was below the high-water mark ${repair.highWater}; ` +
    `repaired: the range [${start}, ${range.maxId}) starts at the mark and max_id is now ${range.maxId}.`;
  if (repair.kind === 'regression') {
    logger.error(
      `[LEAF_MAX_ID_REGRESSION] ${message} Someone or something lowered max_id (a hand edit, ` +
        'a restored backup, a failover to a lagging replica): find out who; see docs/operations.md ("max_id went back").',
    );
  } else {
    logger.warn(
      `${message} The gap is this instance's own allocation whose commit failed after the mark was written; never served.`,
    );
  }
}

/** The log line of a range the in-memory guard refused (it lies below IDs this instance holds). */
export function logRangeRefused(logger: Logger, error: AllocationRegressedError): void {
  logger.error(
    `[${error.code}] ${error.message}. Another instance may still be granted IDs issued ` +
      'before; see docs/operations.md ("Never restore an old max_id").',
  );
}
