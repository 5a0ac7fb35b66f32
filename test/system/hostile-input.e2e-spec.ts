import { describeWithServices } from '../support/services';
import type { TestDatabase } from '../support/test-database';
import { expectHostileInputRefused, hostileInput } from './scenarios/hostile-input';
import { auditedTestDatabase } from './scenarios/scenario';

jest.setTimeout(180_000);

describeWithServices(['mysql'], 'system (CI subset): hostile input', () => {
  let db: TestDatabase;

  beforeAll(async () => {
    db = await auditedTestDatabase();
  });

  afterAll(async () => {
    await db?.drop();
  });

  it('answers every malformed request with a 4xx in the JSON error contract and writes nothing', async () => {
    expectHostileInputRefused(await hostileInput(db, 'ci'));
  });
});
