import { describeWithServices } from '../support/services';
import type { TestDatabase } from '../support/test-database';
import { auditedTestDatabase } from './scenarios/scenario';
import { expectSustainedLoadClean, sustainedLoad } from './scenarios/sustained-load';

jest.setTimeout(300_000);

describeWithServices(['mysql', 'zookeeper'], 'system: sustained load', () => {
  let db: TestDatabase;

  beforeAll(async () => {
    db = await auditedTestDatabase();
  });

  afterAll(async () => {
    await db?.drop();
  });

  it.each(['segment', 'snowflake'] as const)(
    '%s mode: no error, no repeated ID, resident memory flat',
    async (mode) => {
      expectSustainedLoadClean(await sustainedLoad(mode, db, 'full'));
    },
  );
});
