import { systemClock } from '../../core/clock';
import { ZookeeperWorkerIdSource } from '../../core/snowflake/zookeeper-worker-id.source';
import { FakeZkClient } from '../fake-zk.client';
import { InMemoryWorkerIdSource } from '../in-memory-worker-id.source';
import { InMemoryWorkerLeaseStore } from '../in-memory-worker-lease.store';
import { workerIdSourceContract } from './worker-id-source.contract';

// ZooKeeper and the leaf_worker_lease rows (MariaDB, PostgreSQL) run the same contract in
// test/contracts/worker-id-source.e2e-spec.ts.
workerIdSourceContract('InMemoryWorkerIdSource', async () => {
  const leases = new InMemoryWorkerLeaseStore(systemClock);
  return {
    clock: systemClock,
    sourceFor: (instance) =>
      new InMemoryWorkerIdSource(systemClock, `10.0.0.${instance}:80`, leases),
    close: async () => undefined,
  };
});

workerIdSourceContract('ZookeeperWorkerIdSource on FakeZkClient', async () => {
  const root = new FakeZkClient();
  return {
    clock: systemClock,
    sourceFor: (instance) =>
      new ZookeeperWorkerIdSource(root.newSession(), {
        kind: 'zookeeper',
        connect: 'fake:2181',
        sessionTimeoutMs: 10_000,
        connectTimeoutMs: 1_000,
        advertise: { ip: `10.0.0.${instance}`, port: 80 },
        reclaim: 'never',
        reclaimMarginMs: 0,
      }),
    close: () => root.close(),
  };
});
