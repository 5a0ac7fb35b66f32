/**
 * `nestjs-leaf/ports`: for an application that brings its own allocation store, ZooKeeper
 * client, worker-state store or clock — the interfaces, and the pieces built on them (several
 * databases per tag, docs/design.md). `nestjs-leaf/testing` has the contract suites an
 * implementation must pass.
 */
export {
  MAX_INT64,
  type AllocatedRange,
  type IssuerFence,
  type LeafAllocRow,
  type LeafAllocStore,
} from './core/segment/leaf-alloc-store.port';
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
export {
  createZookeeperClient,
  type ZkClientFactory,
  type ZkClientFactoryOptions,
} from './nest/snowflake/zk-client.factory';
export type {
  WorkerIdentity,
  WorkerState,
  WorkerStateLockHandle,
  WorkerStateReadResult,
  WorkerStateStore,
  WorkerStateStoreFactory,
  WorkerStateUpdate,
} from './core/snowflake/worker-state';
export {
  chooseWorkerLease,
  type HeldWorkerLease,
  type WorkerLeaseChoice,
  type WorkerLeaseClaim,
  type WorkerLeaseClaimRequest,
  type WorkerLeaseClaimResult,
  type WorkerLeaseRow,
  type WorkerLeaseStore,
} from './core/snowflake/worker-lease-store.port';
export type {
  HeldRegionLease,
  RegionClaim,
  RegionClaimRequest,
  RegionClaimResult,
  RegionLeaseRow,
  RegionRegistry,
} from './core/snowflake/region-registry.port';
export type { IssuerRow, SequenceIssuerStore } from './core/sequence/sequence-issuer-store.port';
export type { NumberFormatStore } from './core/numbers/number-format-store.port';
export type { LeafObserver, RangeLoadDetail } from './core/leaf-observer';
export { systemClock, type Clock } from './core/clock';
