import type { Logger } from '@nestjs/common';
import type { TypeormHighWaterStore } from '../../adapters/typeorm/typeorm-high-water.store';
import type { RecordingHighWaterStore } from '../../core/segment/recording-high-water.store';
import type { ZkClient } from '../../core/zookeeper/zk-client.port';
import type { ResolvedLeafOptions } from '../leaf-options.interface';
import { errorReason } from './allocation-log';

/** The segment high-water mark as the module wires it (internal): ZooKeeper or a database. */
export type SegmentHighWater =
  | {
      readonly kind: 'zookeeper';
      readonly zk: ZkClient;
      readonly store: RecordingHighWaterStore;
      /** The parent znode of the marks. */
      readonly root: string;
    }
  | {
      readonly kind: 'database';
      readonly marks: TypeormHighWaterStore;
      readonly store: RecordingHighWaterStore;
      /** `host:port/database` of the marks' database (table `leaf_high_water`). */
      readonly root: string;
    };

/** State of the high-water mark, as readiness reports it. */
export interface HighWaterStatus {
  /** `off`: not configured (segment-only protection); `on`: reachable; `unavailable`: configured, its store not reachable (allocations refused, IDs in memory still served). */
  readonly state: 'off' | 'on' | 'unavailable';
  /** Which store holds the marks: `zookeeper` or `database` (`leaf_high_water`); `null` when off. */
  readonly store?: 'zookeeper' | 'database' | null;
  /** The parent znode of the marks, or `host:port/database` of their database; `null` when off. */
  readonly root: string | null;
}

/** How long start-up waits for the high-water mark's ZooKeeper before going on without it. */
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
  if (highWater.kind === 'database') {
    // The application owns the DataSource (and its reconnects), as segment.dataSource's.
    logger.log(`Segment high-water mark in leaf_high_water of ${highWater.root}`);
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
  if (!highWater) return { state: 'off', store: null, root: null };
  const up = highWater.kind === 'zookeeper' ? highWater.zk.connected : highWater.marks.available;
  return { state: up ? 'on' : 'unavailable', store: highWater.kind, root: highWater.root };
}

/** Closes what the module opened for the mark (its ZooKeeper session; a DataSource is the application's). */
export async function closeHighWater(highWater: SegmentHighWater | null): Promise<void> {
  if (highWater?.kind === 'zookeeper') await highWater.zk.close();
}
