import { describeWithServices } from '../support/services';
import type { TestDatabase } from '../support/test-database';
import { expectLostCommitHandled, segmentLostCommitAck } from './scenarios/segment-database-faults';
import { auditedTestDatabase, expectSegmentSafe } from './scenarios/scenario';

jest.setTimeout(180_000);

describeWithServices(['mysql'], 'system (CI subset): lost COMMIT acknowledgements', () => {
  let db: TestDatabase;

  beforeAll(async () => {
    db = await auditedTestDatabase();
  });

  afterAll(async () => {
    await db?.drop();
  });

  it('never serves a range whose COMMIT answer was lost', async () => {
    const result = await segmentLostCommitAck(db, 'ci');
    expectSegmentSafe(result);
    expectLostCommitHandled(result, 3);
  });
});
