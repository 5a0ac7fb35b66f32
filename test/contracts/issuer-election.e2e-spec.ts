/**
 * The IssuerElection contract on its real adapters: ZooKeeper (the test ZooKeeper, a client per
 * instance; the namespaces under /sequence are deleted afterwards) and the
 * leaf_sequence_issuer rows on MariaDB and PostgreSQL (a database of this file's own, schema
 * from the migrations). Real time: the cases wait out ZooKeeper's young-session rule.
 */
import type { DataSource } from 'typeorm';
import { ZookeeperClient } from '@app/leaf/adapters/zookeeper/zookeeper.client';
import { ZookeeperIssuerElection } from '@app/leaf/adapters/zookeeper/zookeeper-issuer.election';
import { TypeormSequenceIssuerStore } from '@app/leaf/adapters/typeorm/typeorm-sequence-issuer.store';
import { systemClock } from '@app/leaf/core/clock';
import { monotonicMs } from '@app/leaf/core/leaf-observer';
import { RowIssuerElection } from '@app/leaf/core/sequence/row-issuer.election';
import { issuerElectionContract } from '@app/leaf/testing/contracts/issuer-election.contract';
import { SERVER_FLAVOURS, type ServerTestDatabase } from '../support/server-databases';
import { describeWithServices, zookeeperConnectString } from '../support/services';
import { deleteNamespaces } from '../support/zookeeper';

jest.setTimeout(60_000);

const realTime = {
  clock: systemClock,
  monotonic: monotonicMs,
  pass: (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)),
};

describeWithServices(['zookeeper'], 'IssuerElection on ZooKeeper', () => {
  issuerElectionContract('ZookeeperIssuerElection', async () => ({
    ...realTime,
    leaseMs: 4000,
    election: () =>
      new ZookeeperIssuerElection(
        new ZookeeperClient({ connect: zookeeperConnectString(), sessionTimeoutMs: 4000 }),
      ),
    close: () => deleteNamespaces('/sequence', 'contract'),
  }));
});

for (const flavour of SERVER_FLAVOURS) {
  describeWithServices([flavour.service], `IssuerElection on ${flavour.label}`, () => {
    let db: ServerTestDatabase;
    let dataSource: DataSource;
    issuerElectionContract(`RowIssuerElection on ${flavour.label}`, async () => {
      db = await flavour.create();
      dataSource = await db.openDataSource({ migrate: true });
      return {
        ...realTime,
        leaseMs: 2000,
        election: () => new RowIssuerElection(new TypeormSequenceIssuerStore(dataSource)),
        close: async () => {
          await dataSource.destroy();
          await db.drop();
        },
      };
    });
  });
}
