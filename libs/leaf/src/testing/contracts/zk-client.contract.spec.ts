import { FakeZkClient } from '../fake-zk.client';
import { zkClientContract } from './zk-client.contract';

// The real ZookeeperClient runs the same contract in test/contracts/zk-client.e2e-spec.ts.
zkClientContract('FakeZkClient', async () => {
  const tree = new FakeZkClient();
  return {
    root: '/contract',
    newClient: () => tree.newSession(),
    close: async () => undefined,
  };
});
