import type { Logger } from '@nestjs/common';
import type { RecordingHighWaterStore } from '../../core/segment/recording-high-water.store';
import type { ZkClient } from '../../core/zookeeper/zk-client.port';
import type { ResolvedLeafOptions } from '../leaf-options.interface';
import { errorReason } from './allocation-log';

/** The segment high-water mark as the module wires it (internal). */
export interface SegmentHighWater {
  readonly zk: ZkClient;
  readonly store: RecordingHighWaterStore;
  /** The parent znode of the marks. */
  readonly root: string;
}

/** State of the high-water mark, as readiness reports it. */
export interface HighWaterStatus {
  /** `off`: not configured (segment-only protection); `on`: connected; `unavailable`: configured, ZooKeeper not connected (allocations refused, IDs in memory still served). */
  readonly state: 'off' | 'on' | 'unavailable';
  /** The parent znode of the marks, when on. */
  readonly root: string | null;
}

/** How long start-up waits for the high-water mark's ZooKeeper before going on without it. */
const HIGH_WATER_CONNECT_TIMEOUT_MS = 5000;

/**
 * Opens the high-water mark's session. Start-up does not fail without it: allocations are
 * refused (`LEAF_HIGH_WATER_UNAVAILABLE`) until it connects, readiness says so. Without a
 * mark, a shared MySQL/MariaDB database gets a warning.
 */
export async function connectHighWater(
  highWater: SegmentHighWater | null,
  leafOptions: ResolvedLeafOptions,
  logger: Logger,
): Promise<void> {
  const allocation = leafOptions.segment?.allocation;
  const shared =
    allocation?.kind === 'dataSource' &&
    ['mysql', 'mariadb'].includes(allocation.dataSource.options.type);
  if (!highWater) {
    // A shared database is where instances share tags and backups get restored; SQLite and
    // custom stores are left alone.
    if (!shared) return;
    const modes = leafOptions.sequence ? 'Segment and sequence mode' : 'Segment mode';
    const sequence = leafOptions.sequence
      ? ' (in sequence mode, by the issuer until its group moves to another instance)'
      : '';
    logger.warn(
      `${modes} without a high-water mark (segment.highWater / LEAF_SEGMENT_HIGH_WATER_ZK): ` +
        `a lowered or restored max_id is caught only by the instance holding the IDs above it${sequence}. ` +
        'Never lower max_id or restore leaf_alloc from a backup (docs/operations.md).',
    );
    return;
  }
  try {
    await highWater.zk.connect(HIGH_WATER_CONNECT_TIMEOUT_MS);
    logger.log(`Segment high-water mark on ZooKeeper (${highWater.root})`);
  } catch (error) {
    logger.warn(
      `The high-water mark's ZooKeeper is not reachable (${errorReason(error)}): allocations answer ` +
        'LEAF_HIGH_WATER_UNAVAILABLE until it is; IDs in memory are still served.',
    );
  }
}

/** The high-water mark's state (`off` without `segment.highWater`). */
export function highWaterStatus(highWater: SegmentHighWater | null): HighWaterStatus {
  if (!highWater) return { state: 'off', root: null };
  return { state: highWater.zk.connected ? 'on' : 'unavailable', root: highWater.root };
}
