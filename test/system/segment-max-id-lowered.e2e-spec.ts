import { describeScenarios } from './scenarios/scenario';
import { expectMaxIdLoweredSafe, segmentMaxIdLowered } from './scenarios/segment-max-id-lowered';

jest.setTimeout(180_000);

describeScenarios(['mysql'], 'system (CI subset): max_id lowered by hand under load', {
  'refuses the smaller ranges, alerts, and never repeats an ID': async (db) =>
    expectMaxIdLoweredSafe(await segmentMaxIdLowered(db, 'ci')),
});
