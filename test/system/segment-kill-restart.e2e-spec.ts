import { describeScenarios } from './scenarios/scenario';
import { expectKillRestartSafe, segmentKillRestart } from './scenarios/segment-kill-restart';

jest.setTimeout(180_000);

describeScenarios(['mysql'], 'system (CI subset): kill -9 under load, segment mode', {
  'never repeats an ID; restarted instances serve only new ranges': async (db) =>
    expectKillRestartSafe(await segmentKillRestart(db, 'ci')),
});
