import { InMemoryWorkerStateStores } from '../in-memory-worker-state.store';
import { workerStateStoreContract } from './worker-state-store.contract';

// The file store runs the same contract in test/contracts/worker-state-store.e2e-spec.ts.
workerStateStoreContract('InMemoryWorkerStateStores', async () => {
  const stores = new InMemoryWorkerStateStores();
  return {
    storeFor: (identity) => stores.of(identity),
    writeRaw: async (identity, text) => stores.setRaw(identity, text),
    close: async () => undefined,
  };
});
