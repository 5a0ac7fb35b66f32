import type { Provider } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { allocationIdleTimeoutSec } from '../../adapters/typeorm/session-bound';
import { createLeafAllocStore } from '../../adapters/typeorm/leaf-alloc-store.factory';
import type { LeafAllocStore } from '../../core/segment/leaf-alloc-store.port';
import { MultiAllocStore } from '../../core/segment/multi-alloc.store';
import { RecordingHighWaterStore } from '../../core/segment/recording-high-water.store';
import {
  LEAF_ALLOC_STORE,
  LEAF_RESOLVED_OPTIONS,
  LEAF_SEGMENT_HIGH_WATER,
  LEAF_ZK_CLIENT_FACTORY,
} from '../leaf.constants';
import { highWaterStore } from '../coordination.assembly';
import type { ResolvedLeafOptions } from '../leaf-options.interface';
import { rangeAllocation } from '../leaf-modes';
import type { ZkClientFactory } from '../snowflake/zk-client.factory';
import { SegmentAdminService } from './segment-admin.service';
import type { SegmentHighWater } from './segment-high-water';
import { SegmentService } from './segment.service';
import { TagRefreshJob } from './tag-refresh.job';

/**
 * The allocation store ranges come from ({@link rangeAllocation}: segment mode's, else
 * sequence mode's): the one given, or built on the databases.
 */
function allocStore(
  options: ResolvedLeafOptions,
  highWater: SegmentHighWater | null,
): LeafAllocStore {
  const allocation = rangeAllocation(options);
  if (allocation.kind === 'store') return allocation.store;
  // A session that holds a row lock and falls silent (its process died or froze) is
  // dropped by the server after this long: past the longest pause of the transaction.
  const idleTimeoutSec = allocationIdleTimeoutSec(
    options.segment?.highWater?.callTimeoutMs ?? null,
  );
  const onDatabase = (dataSource: DataSource, residueClasses = false) =>
    createLeafAllocStore(dataSource, { highWater, residueClasses, idleTimeoutSec });
  if (allocation.kind === 'dataSource') return onDatabase(allocation.dataSource);
  // Several databases: one store each, reading the rows' residue classes; one mark per
  // tag per database (docs/design.md, "Several databases per tag").
  return new MultiAllocStore(
    allocation.sources.map((source) => ({
      name: source.name,
      store: 'store' in source ? source.store : onDatabase(source.dataSource, true),
    })),
    { timeoutMs: allocation.timeoutMs, retryMs: 1000 },
    options.clock,
  );
}

/**
 * The allocation store (and segment mode's high-water marks, which fence it), registered by
 * `LeafModule` with any mode that takes ranges: segment, sequence.
 */
export const ALLOCATION_PROVIDERS: Provider[] = [
  {
    provide: LEAF_SEGMENT_HIGH_WATER,
    useFactory: (
      options: ResolvedLeafOptions,
      zkFactory: ZkClientFactory,
    ): SegmentHighWater | null => {
      const marks = highWaterStore(options, zkFactory);
      return marks ? new RecordingHighWaterStore(marks) : null;
    },
    inject: [LEAF_RESOLVED_OPTIONS, LEAF_ZK_CLIENT_FACTORY],
  },
  {
    provide: LEAF_ALLOC_STORE,
    useFactory: allocStore,
    inject: [LEAF_RESOLVED_OPTIONS, LEAF_SEGMENT_HIGH_WATER],
  },
];

/** Segment mode's providers, registered by `LeafModule` only when the mode is on. */
export const SEGMENT_PROVIDERS: Provider[] = [SegmentService, SegmentAdminService, TagRefreshJob];

/** What segment mode's module exports. */
export const SEGMENT_EXPORTS = [SegmentService, SegmentAdminService];
