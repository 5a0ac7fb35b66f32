import { describeScenarios, expectSegmentSafe } from './scenarios/scenario';
import { expectLostCommitHandled, segmentLostCommitAck } from './scenarios/segment-database-faults';

jest.setTimeout(180_000);

describeScenarios(['mysql'], 'system (CI subset): lost COMMIT acknowledgements', {
  'never serves a range whose COMMIT answer was lost': async (db) => {
    const result = await segmentLostCommitAck(db, 'ci');
    expectSegmentSafe(result);
    expectLostCommitHandled(result, 3);
  },
});
