/**
 * The ZkClient contract on the real ZookeeperClient, against the test ZooKeeper
 * (LEAF_ZK_ADDRESS, default 127.0.0.1:2181), in a namespace of its own that is deleted
 * afterwards.
 */
import { randomUUID } from 'node:crypto';
import { ZookeeperClient } from '@app/leaf/adapters/zookeeper/zookeeper.client';
import { zkClientContract } from '@app/leaf/testing/contracts/zk-client.contract';
import { describeWithServices, zookeeperConnectString } from '../support/services';
import { connectZookeeperAdmin, deleteTree } from '../support/zookeeper';

describeWithServices(['zookeeper'], 'ZkClient contract on ZooKeeper', () => {
  zkClientContract('ZookeeperClient', async () => {
    const root = `/leaf-contract-${randomUUID()}`;
    return {
      root,
      newClient: () =>
        new ZookeeperClient({ connect: zookeeperConnectString(), sessionTimeoutMs: 10_000 }),
      close: async () => {
        const admin = await connectZookeeperAdmin();
        try {
          await deleteTree(admin, root);
        } finally {
          await admin.close();
        }
      },
    };
  });
});
