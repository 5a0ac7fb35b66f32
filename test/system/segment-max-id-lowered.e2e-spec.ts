import { describeWithServices } from '../support/services';
import type { TestDatabase } from '../support/test-database';
import { auditedTestDatabase } from './scenarios/scenario';
import { expectMaxIdLoweredSafe, segmentMaxIdLowered } from './scenarios/segment-max-id-lowered';

jest.setTimeout(180_000);

describeWithServices(['mysql'], 'system (CI subset): max_id lowered by hand under load', () => {
  let db: TestDatabase;

  beforeAll(async () => {
    db = await auditedTestDatabase();
  });

  afterAll(async () => {
    await db?.drop();
  });

  it('refuses the smaller ranges, alerts, and never repeats an ID', async () => {
    expectMaxIdLoweredSafe(await segmentMaxIdLowered(db, 'ci'));
  });
});
