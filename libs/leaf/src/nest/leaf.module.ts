import { Module, type Provider } from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import { SegmentHealthIndicator } from './health/segment.health';
import { SnowflakeHealthIndicator } from './health/snowflake.health';
import { IdService } from './id.service';
import { LEAF_ALLOC_STORE, LEAF_RESOLVED_OPTIONS, LEAF_ZK_CLIENT_FACTORY } from './leaf.constants';
import { LeafConfigurableModuleClass, LEAF_MODULE_OPTIONS } from './leaf.module-definition';
import type { LeafModuleOptions, ResolvedLeafOptions } from './leaf-options.interface';
import { resolveLeafOptions } from './leaf-options.resolver';
import { createLeafAllocStore } from '../adapters/typeorm/leaf-alloc-store.factory';
import type { LeafAllocStore } from '../core/segment/leaf-alloc-store.port';
import { SegmentService } from './segment/segment.service';
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
    provide: LEAF_ALLOC_STORE,
    useFactory: (options: ResolvedLeafOptions): LeafAllocStore | null => {
      const segment = options.segment;
      if (!segment) return null;
      return segment.store ?? createLeafAllocStore(segment.dataSource!);
    },
    inject: [LEAF_RESOLVED_OPTIONS],
  },
  SegmentService,
  TagRefreshJob,
  IdService,
  SegmentHealthIndicator,
  { provide: LEAF_ZK_CLIENT_FACTORY, useValue: defaultZkClientFactory },
  SnowflakeService,
  SnowflakeHeartbeatJob,
  SnowflakeHealthIndicator,
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
 */
@Module({
  imports: [TerminusModule],
  providers,
  exports: [
    SegmentService,
    IdService,
    SegmentHealthIndicator,
    LEAF_RESOLVED_OPTIONS,
    SnowflakeService,
    SnowflakeHealthIndicator,
  ],
})
export class LeafModule extends LeafConfigurableModuleClass {}
