import type { Logger } from '@nestjs/common';
import type { AllocationRegressedError } from '../../core/errors/allocation.error';
import { messageOf } from '../../core/errors/leaf.error';
import type { AllocatedRange } from '../../core/segment/leaf-alloc-store.port';
import type { HandBackResult } from '../../core/segment/range-loader';
import type { SegmentLoadListener } from '../../core/segment/segment-buffer';

/**
 * The log lines of segment mode's range loads: a failing tag once per failure streak (not
 * per request), its recovery, and every repaired or refused range.
 */
export function segmentLoadLog(logger: Logger): SegmentLoadListener {
  return {
    loadFailed: (tag, error) =>
      logger.warn(
        `Allocation for tag "${tag}" failing: ${messageOf(error)}. Serving what is in memory; ` +
          'readiness turns down before it runs out. Check the database (LEAF_DB_URL) and the row lock.',
      ),
    loadRecovered: (tag, failures) =>
      logger.log(`Allocation for tag "${tag}" recovered after ${failures} failed attempt(s)`),
    rangeRepaired: (range) => logRangeRepaired(logger, range),
    rangeRefused: (error) => logRangeRefused(logger, error),
  };
}

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

/** The log line of a graceful stop's hand-back: IDs handed back, gaps kept, failures. */
export function logHandBack(logger: Logger, results: readonly HandBackResult[]): void {
  const done = results.filter((r) => r.handedBack);
  const ids = done.reduce((sum, r) => sum + (r.maxId - r.firstUnused), 0n);
  const failed = results.filter((r) => r.error !== undefined);
  const refused = results.length - done.length - failed.length;
  if (results.length === 0) return;
  logger.log(
    `Handed back ${ids} unused ID(s) of ${done.length} tag(s)` +
      (refused > 0 ? `; ${refused} tag(s) kept their gap (another instance allocated since)` : '') +
      (failed.length > 0
        ? `; ${failed.length} failed (${failed.map((r) => `${r.tag}: ${messageOf(r.error)}`).join(', ')})`
        : ''),
  );
}
