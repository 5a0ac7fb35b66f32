import { describeScenarios } from './scenarios/scenario';
import { expectKillRestartSafe, segmentKillRestart } from './scenarios/segment-kill-restart';

jest.setTimeout(300_000);

describeScenarios(['mysql'], 'system: kill -9 under load, segment mode', {
  'never repeats an ID; restarted instances serve only new ranges': async (db) =>
    expectKillRestartSafe(await segmentKillRestart(db, 'full')),
});
