/**
 * The WorkerIdSource contract on its real adapters: ZooKeeper (the test ZooKeeper, a client
 * per source; the namespaces under /snowflake are deleted afterwards) and the
 * leaf_worker_lease rows on MariaDB and PostgreSQL (a database of this file's own, schema from
 * the migrations).
 */
import type { DataSource } from 'typeorm';
import { createWorkerLeaseStore } from 'nestjs-leaf/storage/typeorm';
import { ZookeeperClient } from '@app/leaf/adapters/zookeeper/zookeeper.client';
import { systemClock } from '@app/leaf/core/clock';
import { LeaseTableWorkerIdSource } from '@app/leaf/core/snowflake/lease-table-worker-id.source';
import { ZookeeperWorkerIdSource } from '@app/leaf/core/snowflake/zookeeper-worker-id.source';
import { workerIdSourceContract } from '@app/leaf/testing/contracts/worker-id-source.contract';
import { SERVER_FLAVOURS, type ServerTestDatabase } from '../support/server-databases';
import { describeWithServices, zookeeperConnectString } from '../support/services';
import { deleteNamespaces } from '../support/zookeeper';

jest.setTimeout(30_000);

describeWithServices(['zookeeper'], 'WorkerIdSource on ZooKeeper', () => {
  workerIdSourceContract('ZookeeperWorkerIdSource', async () => ({
    clock: systemClock,
    sourceFor: (instance) =>
      new ZookeeperWorkerIdSource(
        new ZookeeperClient({ connect: zookeeperConnectString(), sessionTimeoutMs: 4000 }),
        {
          kind: 'zookeeper',
          connect: zookeeperConnectString(),
          sessionTimeoutMs: 4000,
          connectTimeoutMs: 5000,
          advertise: { ip: `10.0.0.${instance}`, port: 80 },
          reclaim: 'never',
          reclaimMarginMs: 0,
        },
      ),
    close: () => deleteNamespaces('/snowflake', 'contract'),
  }));
});

for (const flavour of SERVER_FLAVOURS) {
  describeWithServices([flavour.service], `WorkerIdSource on ${flavour.label}`, () => {
    let db: ServerTestDatabase;
    let dataSource: DataSource;
    workerIdSourceContract(`LeaseTableWorkerIdSource on ${flavour.label}`, async () => {
      db = await flavour.create();
      dataSource = await db.openDataSource({ migrate: true });
      const store = createWorkerLeaseStore(dataSource);
      return {
        clock: systemClock,
        sourceFor: (instance) =>
          new LeaseTableWorkerIdSource({
            store,
            holder: `10.0.0.${instance}:80`,
            marginMs: 1_000,
            callTimeoutMs: 2_000,
          }),
        close: async () => {
          await dataSource.destroy();
          await db.drop();
        },
      };
    });
  });
}
