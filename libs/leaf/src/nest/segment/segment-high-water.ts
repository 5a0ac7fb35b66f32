import type { Logger } from '@nestjs/common';
import type { RecordingHighWaterStore } from '../../core/segment/recording-high-water.store';
import type { ResolvedLeafOptions } from '../leaf-options.interface';
import { messageOf } from '../../core/errors/leaf.error';

/** The segment high-water mark as the module wires it (internal): its adapter, recorded. */
export type SegmentHighWater = RecordingHighWaterStore;

/** How long start-up waits for the high-water mark's store before going on without it. */
const HIGH_WATER_CONNECT_TIMEOUT_MS = 5000;

/**
 * Opens the high-water mark's session. Start-up does not fail without it: allocations are
 * refused (`LEAF_HIGH_WATER_UNAVAILABLE`) until it connects, readiness says so. Without a
 * mark, a shared MySQL/MariaDB or PostgreSQL database gets a warning.
 */
export async function connectHighWater(
  highWater: SegmentHighWater | null,
  leafOptions: ResolvedLeafOptions,
  logger: Logger,
): Promise<void> {
  const allocation = leafOptions.segment?.allocation;
  const shared =
    allocation?.kind === 'dataSource' &&
    ['mysql', 'mariadb', 'postgres'].includes(allocation.dataSource.options.type);
  if (!highWater) {
    // A shared database is where instances share tags and backups get restored; SQLite and
    // custom stores are left alone.
    if (!shared) return;
    const modes = leafOptions.sequence ? 'Segment and sequence mode' : 'Segment mode';
    const sequence = leafOptions.sequence
      ? ' (in sequence mode, by the issuer until its group moves to another instance)'
      : '';
    logger.warn(
      `${modes} without a high-water mark (segment.highWater / LEAF_SEGMENT_HIGH_WATER_ZK or _DB_URL): ` +
        `a lowered or restored max_id is caught only by the instance holding the IDs above it${sequence}. ` +
        'Never lower max_id or restore leaf_alloc from a backup (docs/operations.md).',
    );
    return;
  }
  const marks = highWater.marks;
  const where = `${marks.kind ?? 'store'} (${marks.describe?.() ?? 'custom'})`;
  try {
    // A DataSource is the application's (it reconnects by itself): nothing to open then.
    await marks.open?.(HIGH_WATER_CONNECT_TIMEOUT_MS);
    logger.log(`Segment high-water mark in ${where}`);
  } catch (error) {
    logger.warn(
      `The high-water mark's ${where} is not reachable (${messageOf(error)}): allocations answer ` +
        'LEAF_HIGH_WATER_UNAVAILABLE until it is; IDs in memory are still served.',
    );
  }
}
