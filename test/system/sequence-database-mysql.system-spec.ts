import { createTestDatabase, type TestDatabase } from '../support/test-database';
import { describeWithServices } from '../support/services';
import { expectSequenceSafe } from './scenarios/sequence-order';
import { databaseSequenceScenario, expectDatabaseHandover } from './scenarios/sequence-database';

jest.setTimeout(90_000);

describeWithServices(['mysql'], 'system: sequence mode elected in MariaDB (no ZooKeeper)', () => {
  let db: TestDatabase | undefined;
  afterAll(async () => {
    await db?.drop();
  });

  it('three instances on one key: kill -9 of the issuer, then the next SIGSTOPped past its lease — strictly increasing, no duplicate, the resumed one issues nothing', async () => {
    db = await createTestDatabase({ migrate: true });
    const result = await databaseSequenceScenario(db, 'mariadb');
    expectSequenceSafe(result);
    expectDatabaseHandover(result);
  });
});
