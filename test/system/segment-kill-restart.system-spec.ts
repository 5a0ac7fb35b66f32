import { describeWithServices } from '../support/services';
import type { TestDatabase } from '../support/test-database';
import { auditedTestDatabase } from './scenarios/scenario';
import { expectKillRestartSafe, segmentKillRestart } from './scenarios/segment-kill-restart';

jest.setTimeout(300_000);

describeWithServices(['mysql'], 'system: kill -9 under load, segment mode', () => {
  let db: TestDatabase;

  beforeAll(async () => {
    db = await auditedTestDatabase();
  });

  afterAll(async () => {
    await db?.drop();
  });

  it('never repeats an ID; restarted instances serve only new ranges', async () => {
    expectKillRestartSafe(await segmentKillRestart(db, 'full'));
  });
});
