import { Module, type Provider } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { LeafConfigurationError } from '../core/errors/leaf-configuration.error';
import { IdService } from '../core/id.service';
import { RecordingHighWaterStore } from '../core/segment/recording-high-water.store';
import { EmbeddedIdService } from './embedded-id.service';
import {
  LEAF_ALLOC_STORE,
  LEAF_RESOLVED_OPTIONS,
  LEAF_SCHEDULER,
  LEAF_SEGMENT_HIGH_WATER,
  LEAF_SEQUENCE_TRANSPORT,
  LEAF_ZK_CLIENT_FACTORY,
} from './leaf.constants';
import {
  highWaterRoot,
  ZookeeperHighWaterStore,
} from '../adapters/zookeeper/zookeeper-high-water.store';
import type { SegmentHighWater } from './segment/segment-high-water';
import type { ZkClientFactory } from './snowflake/zk-client.factory';
import { LeafConfigurableModuleClass, LEAF_MODULE_OPTIONS } from './leaf.module-definition';
import type { LeafModuleOptions, ResolvedLeafOptions } from './leaf-options.interface';
import { resolveLeafOptions } from './leaf-options.resolver';
import { createLeafAllocStore } from '../adapters/typeorm/leaf-alloc-store.factory';
import { allocationIdleTimeoutSec } from '../adapters/typeorm/session-bound';
import type { LeafAllocStore } from '../core/segment/leaf-alloc-store.port';
import { MultiAllocStore } from '../core/segment/multi-alloc.store';
import { LeafEventRecorder } from './metrics/leaf-event.recorder';
import { LeafMetricsCollector } from './metrics/leaf-metrics.collector';
import { SegmentAdminService } from './segment/segment-admin.service';
import { SegmentService } from './segment/segment.service';
import { SequenceService } from './sequence/sequence.service';
import { TagRefreshJob } from './segment/tag-refresh.job';
import { SnowflakeHeartbeatJob } from './snowflake/snowflake-heartbeat.job';
import { SnowflakeService } from './snowflake/snowflake.service';
import { defaultZkClientFactory } from './snowflake/zk-client.factory';

const providers: Provider[] = [
  {
    provide: LEAF_RESOLVED_OPTIONS,
    useFactory: (raw: LeafModuleOptions): ResolvedLeafOptions => resolveLeafOptions(raw),
    inject: [LEAF_MODULE_OPTIONS],
  },
  {
    provide: LEAF_SEGMENT_HIGH_WATER,
    useFactory: (
      options: ResolvedLeafOptions,
      zkFactory: ZkClientFactory,
    ): SegmentHighWater | null => {
      const highWater = options.segment?.highWater;
      if (!highWater) return null;
      const zk = zkFactory({
        connect: highWater.connect,
        sessionTimeoutMs: highWater.sessionTimeoutMs,
      });
      return {
        zk,
        store: new RecordingHighWaterStore(
          new ZookeeperHighWaterStore(zk, options.name, {
            callTimeoutMs: highWater.callTimeoutMs,
          }),
        ),
        root: highWaterRoot(options.name),
      };
    },
    inject: [LEAF_RESOLVED_OPTIONS, LEAF_ZK_CLIENT_FACTORY],
  },
  {
    provide: LEAF_ALLOC_STORE,
    useFactory: (
      options: ResolvedLeafOptions,
      highWater: SegmentHighWater | null,
    ): LeafAllocStore | null => {
      const segment = options.segment;
      if (!segment) return null;
      const allocation = segment.allocation;
      if (allocation.kind === 'store') return allocation.store;
      // A session that holds a row lock and falls silent (its process died or froze) is
      // dropped by the server after this long: past the longest pause of the transaction.
      const idleTimeoutSec = allocationIdleTimeoutSec(segment.highWater?.callTimeoutMs ?? null);
      if (allocation.kind === 'dataSource') {
        return createLeafAllocStore(allocation.dataSource, {
          highWater: highWater?.store ?? null,
          idleTimeoutSec,
        });
      }
      // Several databases: one store each, reading the rows' residue classes; one mark per
      // tag per database (docs/design.md, "Several databases per tag").
      return new MultiAllocStore(
        allocation.sources.map((source) => ({
          name: source.name,
          store:
            'store' in source
              ? source.store
              : createLeafAllocStore(source.dataSource, {
                  highWater: highWater?.store ?? null,
                  residueClasses: true,
                  idleTimeoutSec,
                }),
        })),
        { timeoutMs: allocation.timeoutMs, retryMs: 1000 },
        options.clock,
      );
    },
    inject: [LEAF_RESOLVED_OPTIONS, LEAF_SEGMENT_HIGH_WATER],
  },
  {
    // The jobs' SchedulerRegistry, or one error saying what to do: Nest's own message
    // ("can't resolve dependencies of TagRefreshJob") does not name ScheduleModule.
    provide: LEAF_SCHEDULER,
    useFactory: (registry: SchedulerRegistry | undefined): SchedulerRegistry => {
      if (!registry) {
        throw new LeafConfigurationError([
          'LeafModule registers its periodic jobs in SchedulerRegistry, which is missing: import ScheduleModule.forRoot() (@nestjs/schedule) exactly once, in the application module (LeafModule never calls forRoot() itself)',
        ]);
      }
      return registry;
    },
    inject: [{ token: SchedulerRegistry, optional: true }],
  },
  SegmentService,
  SegmentAdminService,
  TagRefreshJob,
  EmbeddedIdService,
  { provide: IdService, useExisting: EmbeddedIdService },
  { provide: LEAF_ZK_CLIENT_FACTORY, useValue: defaultZkClientFactory },
  // null: keep-alive HTTP (SequenceService); tests override it with an in-process fake.
  { provide: LEAF_SEQUENCE_TRANSPORT, useValue: null },
  SnowflakeService,
  SnowflakeHeartbeatJob,
  SequenceService,
  LeafEventRecorder,
  LeafMetricsCollector,
];

/**
 * Leaf's ID generators as a Nest module.
 *
 * ```ts
 * LeafModule.forRootAsync({
 *   imports: [DatabaseModule],
 *   inject: [DataSource],
 *   useFactory: (dataSource: DataSource) => ({ segment: { dataSource } }),
 * })
 * ```
 *
 * The application must import `ScheduleModule.forRoot()` once: the module registers its
 * periodic jobs in `SchedulerRegistry` and never calls `forRoot()` itself.
 *
 * The terminus indicators (`nestjs-leaf/health`) are not part of this module, so that an
 * application without health checks never loads `@nestjs/terminus`: provide them in a module
 * that imports `TerminusModule` and sees `LeafModule`'s services.
 */
@Module({
  providers,
  exports: [
    SegmentService,
    SegmentAdminService,
    IdService,
    EmbeddedIdService,
    LEAF_RESOLVED_OPTIONS,
    SnowflakeService,
    SequenceService,
    LeafMetricsCollector,
  ],
})
export class LeafModule extends LeafConfigurableModuleClass {}
