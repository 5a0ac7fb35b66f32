import { InMemoryGaplessStore } from '../in-memory-gapless.store';
import { gaplessStoreContract } from './gapless-store.contract';

// The TypeORM store (MariaDB, PostgreSQL) runs the same contract in
// test/contracts/gapless-store.e2e-spec.ts.
gaplessStoreContract('InMemoryGaplessStore', () => {
  const store = new InMemoryGaplessStore();
  return Promise.resolve({ store, other: store, close: () => Promise.resolve() });
});
