import { ZookeeperHighWaterStore } from '../../adapters/zookeeper/zookeeper-high-water.store';
import { FakeZkClient } from '../fake-zk.client';
import { InMemoryHighWaterStore } from '../in-memory-high-water.store';
import { highWaterStoreContract } from './high-water-store.contract';

// The TypeORM store (MariaDB, PostgreSQL) runs the same contract in
// test/contracts/high-water-store.e2e-spec.ts.
highWaterStoreContract('ZookeeperHighWaterStore on FakeZkClient', async () => {
  const zk = new FakeZkClient();
  await zk.connect(100);
  return {
    storeFor: (name) => new ZookeeperHighWaterStore(zk, name),
    close: () => zk.close(),
  };
});

highWaterStoreContract('InMemoryHighWaterStore', async () => {
  const names = new Map<string, InMemoryHighWaterStore['marks']>();
  return {
    storeFor: (name) => {
      if (!names.has(name)) names.set(name, new Map());
      return new InMemoryHighWaterStore(names.get(name));
    },
    close: async () => undefined,
  };
});
