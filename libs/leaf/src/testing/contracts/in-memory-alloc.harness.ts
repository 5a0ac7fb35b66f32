import { InMemoryAllocStore } from '../in-memory-alloc.store';
import type { LeafAllocStoreHarness } from './leaf-alloc-store.contract';

/** {@link InMemoryAllocStore} as a {@link LeafAllocStoreHarness}: the store is its own storage. */
export async function inMemoryAllocStoreHarness(): Promise<LeafAllocStoreHarness> {
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
      store.journal.length = 0;
    },
    close: async () => undefined,
    journal: {
      rows: async (tag) =>
        store.journal
          .filter((grant) => grant.tag === tag)
          .map(({ start, end, mode, instance, term }) => ({ start, end, mode, instance, term })),
      break: async () => store.breakJournal(true),
      repair: async () => store.breakJournal(false),
    },
  };
}
