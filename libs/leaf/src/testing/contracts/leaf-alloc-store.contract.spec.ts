import { InMemoryAllocStore } from '../in-memory-alloc.store';
import { leafAllocStoreContract } from './leaf-alloc-store.contract';

// The real stores run the same contract in test/contracts/leaf-alloc-store.*.e2e-spec.ts.
leafAllocStoreContract('InMemoryAllocStore', async () => {
  const store = new InMemoryAllocStore();
  return {
    store,
    insert: async ({ tag, maxId, step, description = null }) => {
      store.setTag(tag, step, maxId, description);
    },
    maxId: async (tag) => store.maxId(tag) ?? null,
    count: async () => (await store.listTags()).length,
    clear: async () => {
      for (const tag of await store.listTags()) store.deleteTag(tag);
    },
    close: async () => undefined,
  };
});
