import {
  createPostgresTestDatabase,
  type PostgresTestDatabase,
} from '../support/postgres-database';
import { describeWithServices } from '../support/services';
import { expectSequenceSafe } from './scenarios/sequence-order';
import { databaseSequenceScenario, expectDatabaseHandover } from './scenarios/sequence-database';

jest.setTimeout(90_000);

describeWithServices(
  ['postgres', 'zookeeper'],
  'system: sequence mode on PostgreSQL elected through ZooKeeper',
  () => {
    let db: PostgresTestDatabase | undefined;
    afterAll(async () => {
      await db?.drop();
    });

    it('LEAF_DB_URL=postgres://… with LEAF_SEQUENCE_ZK: the same kill -9 and SIGSTOP, strictly increasing, no duplicate', async () => {
      db = await createPostgresTestDatabase({ migrate: true });
      const result = await databaseSequenceScenario(db, 'postgres', 'zookeeper');
      expectSequenceSafe(result);
      expectDatabaseHandover(result);
    });
  },
);
