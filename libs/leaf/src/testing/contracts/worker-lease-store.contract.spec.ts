import { FakeClock } from '../fake-clock';
import { InMemoryWorkerLeaseStore } from '../in-memory-worker-lease.store';
import { inMemoryLeaseTableHarness } from './lease-table.harness';
import { workerLeaseStoreContract } from './worker-lease-store.contract';

// The TypeORM store runs the same contract on MariaDB and PostgreSQL in
// test/contracts/worker-lease-store.e2e-spec.ts.
workerLeaseStoreContract('InMemoryWorkerLeaseStore', async () => {
  const clock = new FakeClock();
  const store = new InMemoryWorkerLeaseStore(clock);
  return { store, ...inMemoryLeaseTableHarness(clock, store) };
});
