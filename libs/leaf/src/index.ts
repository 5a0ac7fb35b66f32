/**
 * `nestjs-leaf`: the public API. Internals (buffers, generators, the worker-ID protocol, the
 * lease committer) are not exported. Other entry points: `nestjs-leaf/health` (terminus
 * indicators, so that `@nestjs/terminus` loads only when used) and `nestjs-leaf/testing`
 * (fakes and contract suites).
 */

// The module and its options
export { LeafModule } from './nest/leaf.module';
export type {
  LeafModuleOptions,
  LeafSegmentOptions,
  LeafSnowflakeOptions,
  LeafZookeeperOptions,
  LeafHighWaterOptions,
  LeafSequenceOptions,
  LeafSequenceZookeeperOptions,
  ResolvedSequenceOptions,
  ResolvedLeafOptions,
  ResolvedSegmentOptions,
  ResolvedSnowflakeOptions,
} from './nest/leaf-options.interface';
export { resolveLeafOptions } from './nest/leaf-options.resolver';
export { sequenceDatabaseProblem } from './nest/sequence/sequence-options.resolver';
// Every option's default and range, written once (docs/configuration.md)
export { LEAF_DEFAULTS } from './core/leaf-defaults';
export {
  LEAF_OPTION_RULES,
  SNOWFLAKE_LAYOUT_NAMES,
  WORKER_RECLAIM_MODES,
  type LeafOptionPath,
  type RuleValue,
} from './core/leaf-option-rules';
export {
  ruleProblem,
  type BooleanRule,
  type EnumRule,
  type FractionRule,
  type IntegerRule,
  type ListRule,
  type OptionRule,
  type StringRule,
} from './core/option-rule';
export { describeDefault, describeRange } from './core/option-rule.describe';
export {
  LEAF_ALLOC_STORE,
  LEAF_JOB_NAMES,
  LEAF_RESOLVED_OPTIONS,
  LEAF_SEQUENCE_TRANSPORT,
  LEAF_ZK_CLIENT_FACTORY,
} from './nest/leaf.constants';
import type { LEAF_ASYNC_OPTIONS_TYPE, LEAF_OPTIONS_TYPE } from './nest/leaf.module-definition';
/** What `LeafModule.forRoot()` takes: the options plus `isGlobal`. */
export type LeafModuleForRootOptions = typeof LEAF_OPTIONS_TYPE;
/** What `LeafModule.forRootAsync()` takes: `useFactory`/`inject`/`imports` (or `useClass`/`useExisting`) plus `isGlobal`. */
export type LeafModuleAsyncOptions = typeof LEAF_ASYNC_OPTIONS_TYPE;

// The services
export {
  SegmentService,
  type HighWaterStatus,
  type IdRange,
  type SegmentCacheSnapshot,
  type SegmentMonitorSnapshot,
} from './nest/segment/segment.service';
export {
  SegmentAdminService,
  type NewTag,
  type SegmentBufferState,
  type TagState,
  type TagUpdate,
} from './nest/segment/segment-admin.service';
export { MAX_TAG_DESCRIPTION, MAX_TAG_STEP } from './core/segment/tag-definition';
export { SnowflakeService, type SnowflakeStatus } from './nest/snowflake/snowflake.service';
export {
  MAX_FORWARD_ITEMS,
  SequenceService,
  type SequenceForwardedRange,
  type SequenceStats,
} from './nest/sequence/sequence.service';
export {
  MAX_FORWARD_COUNT,
  type ForwardItem,
  type ForwardResult,
  type SequenceForwardTransport,
} from './core/sequence/forward-batcher';
export type { SequenceGroupSnapshot, SequenceGroupState } from './core/sequence/sequence-group';
export {
  SEQUENCE_FORWARD_PATH,
  SEQUENCE_PROBE_PATH,
} from './adapters/http/sequence-forward.transport';
export { IdService, type LeafMode } from './core/id.service';
export { EmbeddedIdService } from './nest/embedded-id.service';

// The remote client and its module (also framework-free as `nestjs-leaf/client`, and without
// the in-process library as `nestjs-leaf/client/nest`); names exported above are the same
// bindings
export * from './client-nest';
export {
  LeafMetricsCollector,
  type LeafMetricsOptions,
} from './nest/metrics/leaf-metrics.collector';
export { LeafEventRecorder } from './nest/metrics/leaf-event.recorder';
export type { LeafObserver } from './core/leaf-observer';
export {
  DEFAULT_SNOWFLAKE_EPOCH,
  JS_SAFE_EPOCH,
  JS_SAFE_LAYOUT,
  LEAF_LAYOUT,
  SNOWFLAKE_LAYOUTS,
  SnowflakeLayout,
  layoutProblems,
  type DecodedSnowflakeId,
  type SnowflakeLayoutName,
  type SnowflakeLayoutSpec,
} from './core/snowflake/snowflake-layout';
export { snowflakeLayoutOf, type WorkerReclaimMode } from './core/snowflake/snowflake-settings';

// TypeORM: the entity, the migrations that create leaf_alloc (MySQL/MariaDB and SQLite)
// with their own migrations table name, and the stores LeafModule builds from a DataSource
export { LeafAllocEntity, bigintTransformer } from './adapters/typeorm/leaf-alloc.entity';
export {
  CreateLeafAlloc1700000000000,
  AddLeafAllocResidueClass1700000000002,
  LEAF_MIGRATIONS,
  LEAF_MIGRATIONS_TABLE_NAME,
} from './adapters/typeorm/migrations';
export { createLeafAllocStore } from './adapters/typeorm/leaf-alloc-store.factory';
export {
  MysqlLeafAllocStore,
  type MysqlLeafAllocStoreOptions,
} from './adapters/typeorm/mysql-leaf-alloc.store';
export { SqliteLeafAllocStore } from './adapters/typeorm/sqlite-leaf-alloc.store';

// HTTP: errors as JSON answers, IDs in JSON
export {
  LeafExceptionFilter,
  leafErrorBody,
  leafErrorStatus,
  type LeafErrorBody,
} from './nest/http/leaf-exception.filter';
export { LeafIdJsonInterceptor, toIdJson, type IdJson } from './nest/http/id-json';

// Errors
export { LeafError, LeafErrorCode } from './core/errors/leaf.error';
export { LeafConfigurationError } from './core/errors/leaf-configuration.error';
export { InvalidArgumentError } from './core/errors/invalid-argument.error';
export { TagNotFoundError } from './core/errors/tag-not-found.error';
export { TagExistsError } from './core/errors/tag-exists.error';
export { UnauthorizedError } from './core/errors/unauthorized.error';
export { ModeDisabledError } from './core/errors/mode-disabled.error';
export { SegmentNotReadyError } from './core/errors/segment-not-ready.error';
export { SnowflakeNotReadyError } from './core/errors/snowflake-not-ready.error';
export { SegmentNotInitializedError } from './core/errors/segment-not-initialized.error';
export {
  AllocationError,
  AllocationLockTimeoutError,
  AllocationRegressedError,
  IdOverflowError,
} from './core/errors/allocation.error';
export { ShuttingDownError } from './core/errors/shutting-down.error';
export { ClockMovedBackwardsError } from './core/errors/clock-moved-backwards.error';
export { TimestampOverflowError } from './core/errors/timestamp-overflow.error';
export { TimeLeaseUnavailableError } from './core/errors/time-lease-unavailable.error';
export { SequenceLeaseExpiredError, SequenceNoIssuerError } from './core/errors/sequence.error';
export { WorkerIdUnavailableError } from './core/errors/worker-id-unavailable.error';
export { WorkerIdExhaustedError } from './core/errors/worker-id-exhausted.error';
export { WorkerIdInUseError } from './core/errors/worker-id-in-use.error';
export { StartupClockBehindError } from './core/errors/startup-clock-behind.error';
export { WorkerStateCorruptError } from './core/errors/worker-state-corrupt.error';
export { WorkerStateLockedError } from './core/errors/worker-state-locked.error';

// Ports, for users who bring their own store, ZooKeeper client or clock
export {
  MAX_INT64,
  type AllocatedRange,
  type LeafAllocRow,
  type LeafAllocStore,
} from './core/segment/leaf-alloc-store.port';
// Several databases per tag (docs/design.md): the store over them and the class arithmetic
export {
  MultiAllocStore,
  type AllocSource,
  type AllocSourceProblem,
  type AllocSourceStatus,
  type MultiAllocStoreOptions,
} from './core/segment/multi-alloc.store';
export {
  classesIntersect,
  residueClassProblem,
  type ResidueClass,
} from './core/segment/residue-class';
export {
  ZkError,
  type ZkClient,
  type ZkConnectionState,
  type ZkErrorCode,
} from './core/zookeeper/zk-client.port';
export type { ZkClientFactory, ZkClientFactoryOptions } from './nest/snowflake/zk-client.factory';
export { createZookeeperClient } from './nest/snowflake/zk-client.factory';
export {
  listSnowflakeWorkers,
  type SnowflakeWorkerInfo,
  type WorkerAliveHolder,
} from './core/snowflake/worker-listing';
export type {
  WorkerIdentity,
  WorkerState,
  WorkerStateLockHandle,
  WorkerStateReadResult,
  WorkerStateStore,
  WorkerStateStoreFactory,
  WorkerStateUpdate,
} from './core/snowflake/worker-state';
export { systemClock, type Clock } from './core/clock';
