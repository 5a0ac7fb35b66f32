/**
 * `nestjs-leaf`: what an application needs — the module, its options, the modes' services,
 * the HTTP helpers, the remote client's module and the error base. Other entry points:
 * `nestjs-leaf/errors` (every error class), `nestjs-leaf/storage/typeorm` (the entity, migrations and
 * stores), `nestjs-leaf/ports` (for a custom store, ZooKeeper client or clock),
 * `nestjs-leaf/health` (terminus indicators), `nestjs-leaf/numbers` (business numbers), `nestjs-leaf/testing` (fakes and contract
 * suites), `nestjs-leaf/client` and `nestjs-leaf/client/nest` (the remote client alone).
 */

// The module and its options
export { LeafModule, type LeafModuleAsyncOptions } from './nest/leaf.module';
export type {
  LeafModuleOptions,
  LeafSegmentOptions,
  LeafSnowflakeOptions,
  LeafZookeeperOptions,
} from './nest/leaf-options.interface';
export type { LeafHighWaterOptions } from './nest/leaf-high-water-options';
export type {
  LeafSequenceOptions,
  LeafSequenceZookeeperOptions,
} from './nest/sequence-options.interface';
export type { LeafSnowflakeDatabaseOptions } from './nest/leaf-snowflake-database.options';
import type { LEAF_OPTIONS_TYPE } from './nest/leaf.module-definition';
/** What `LeafModule.forRoot()` takes: the options plus `isGlobal`. */
export type LeafModuleForRootOptions = typeof LEAF_OPTIONS_TYPE;

// The services: one per mode (provided only when the mode is on), and the facade
export { IdService, type LeafMode } from './core/id.service';
export {
  SegmentService,
  type IdRange,
  type SegmentMonitorSnapshot,
} from './nest/segment/segment.service';
export type { SegmentGenerator } from './core/segment/segment-generator';
export {
  SegmentAdminService,
  type NewTag,
  type TagState,
  type TagUpdate,
} from './nest/segment/segment-admin.service';
export { SnowflakeService, type SnowflakeStatus } from './nest/snowflake/snowflake.service';
export {
  DEFAULT_SNOWFLAKE_EPOCH,
  SnowflakeLayout,
  type DecodedSnowflakeId,
  type SnowflakeLayoutName,
} from './core/snowflake/snowflake-layout';
export type { SnowflakeTimeBounds } from './core/snowflake/snowflake-time-bounds';
export { SequenceService, type SequenceStats } from './nest/sequence/sequence.service';

// Segment mode's store (Leaf's tables, their entity and migrations: `nestjs-leaf/storage/typeorm`)
export type { LeafAllocStore } from './core/segment/leaf-alloc-store.port';
export type { Clock } from './core/clock';

// HTTP: errors as JSON answers, IDs in JSON
export { LeafExceptionFilter, type LeafErrorBody } from './nest/http/leaf-exception.filter';
export { LeafIdJsonInterceptor, toIdJson, type IdJson } from './nest/http/id-json';

// Metrics
export {
  LeafMetricsCollector,
  type LeafMetricsOptions,
} from './nest/metrics/leaf-metrics.collector';

// The remote client's module (also without the in-process library: `nestjs-leaf/client/nest`)
export {
  LeafClientModule,
  type LeafClientModuleAsyncOptions,
  type LeafClientModuleForRootOptions,
} from './client/nest';
export { LeafClient, type LeafClientOptions } from './client';

// Errors: the base and its codes (every class: `nestjs-leaf/errors`)
export { LeafError, LeafErrorCode } from './core/errors/leaf.error';
export { LeafConfigurationError } from './core/errors/leaf-configuration.error';
export { ModeDisabledError } from './core/errors/mode-disabled.error';
