import { inMemoryAllocStoreHarness } from './in-memory-alloc.harness';
import { leafAllocStoreContract } from './leaf-alloc-store.contract';

// The real stores run the same contract in test/contracts/leaf-alloc-store.*.e2e-spec.ts.
leafAllocStoreContract('InMemoryAllocStore', inMemoryAllocStoreHarness);
