import { describeWithServices } from '../support/services';
import type { TestDatabase } from '../support/test-database';
import { auditedTestDatabase } from './scenarios/scenario';
import { expectKillRestartSafe, segmentKillRestart } from './scenarios/segment-kill-restart';

jest.setTimeout(180_000);

describeWithServices(['mysql'], 'system (CI subset): kill -9 under load, segment mode', () => {
  let db: TestDatabase;

  beforeAll(async () => {
    db = await auditedTestDatabase();
  });

  afterAll(async () => {
    await db?.drop();
  });

  it('never repeats an ID; restarted instances serve only new ranges', async () => {
    expectKillRestartSafe(await segmentKillRestart(db, 'ci'));
  });
});
