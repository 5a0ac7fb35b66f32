import { InMemoryNumberFormatStore } from '../in-memory-number-format.store';
import { numberFormatStoreContract } from './number-format-store.contract';

// The TypeORM store (MariaDB, PostgreSQL, SQLite) runs the same contract in
// test/contracts/number-format-store.e2e-spec.ts.
numberFormatStoreContract('InMemoryNumberFormatStore', () =>
  Promise.resolve({ store: new InMemoryNumberFormatStore(), close: () => Promise.resolve() }),
);
