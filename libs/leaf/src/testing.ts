/**
 * `nestjs-leaf/testing`: fakes to use in place of the adapters in a user's tests — an
 * in-memory allocation store, a fake ZooKeeper client, a fake clock, in-memory snowflake
 * state stores — and the contract suites a custom port implementation must pass (under Jest
 * or Vitest: {@link ContractRunner}).
 */
export { InMemoryAllocStore } from './testing/in-memory-alloc.store';
export { FakeZkClient, type FakeZkOperation } from './testing/fake-zk.client';
export { FakeClock } from './testing/fake-clock';
export { InMemoryWorkerStateStores } from './testing/in-memory-worker-state.store';
export { InMemoryWorkerLeaseStore } from './testing/in-memory-worker-lease.store';
export { InMemoryRegionRegistry } from './testing/in-memory-region.registry';
export { InMemorySequenceIssuerStore } from './testing/in-memory-sequence-issuer.store';
export { InMemoryNumberFormatStore } from './testing/in-memory-number-format.store';
export { InMemoryHighWaterStore } from './testing/in-memory-high-water.store';
export { InMemoryIssuerElection } from './testing/in-memory-issuer.election';
export { InMemoryWorkerIdSource } from './testing/in-memory-worker-id.source';
export { globalContractRunner, type ContractRunner } from './testing/contracts/contract-runner';
export {
  leafAllocStoreContract,
  type LeafAllocStoreHarness,
} from './testing/contracts/leaf-alloc-store.contract';
export { zkClientContract, type ZkClientHarness } from './testing/contracts/zk-client.contract';
export {
  highWaterStoreContract,
  type HighWaterStoreHarness,
} from './testing/contracts/high-water-store.contract';
export {
  workerStateStoreContract,
  type WorkerStateStoreHarness,
} from './testing/contracts/worker-state-store.contract';
export {
  numberFormatStoreContract,
  type NumberFormatStoreHarness,
} from './testing/contracts/number-format-store.contract';
export {
  workerLeaseStoreContract,
  type WorkerLeaseStoreHarness,
} from './testing/contracts/worker-lease-store.contract';
export {
  regionRegistryContract,
  type RegionRegistryHarness,
} from './testing/contracts/region-registry.contract';
export {
  issuerElectionContract,
  type IssuerElectionHarness,
} from './testing/contracts/issuer-election.contract';
export {
  workerIdSourceContract,
  type WorkerIdSourceHarness,
} from './testing/contracts/worker-id-source.contract';
