import {
  createPostgresTestDatabase,
  type PostgresTestDatabase,
} from '../support/postgres-database';
import { describeWithServices } from '../support/services';
import { expectSequenceSafe } from './scenarios/sequence-order';
import { databaseSequenceScenario, expectDatabaseHandover } from './scenarios/sequence-database';

jest.setTimeout(90_000);

describeWithServices(
  ['postgres'],
  'system: sequence mode elected in PostgreSQL (no ZooKeeper)',
  () => {
    let db: PostgresTestDatabase | undefined;
    afterAll(async () => {
      await db?.drop();
    });

    it('three instances on one key: kill -9 of the issuer, then the next SIGSTOPped past its lease — strictly increasing, no duplicate, the resumed one issues nothing', async () => {
      db = await createPostgresTestDatabase({ migrate: true });
      const result = await databaseSequenceScenario(db, 'postgres');
      expectSequenceSafe(result);
      expectDatabaseHandover(result);
    });
  },
);
