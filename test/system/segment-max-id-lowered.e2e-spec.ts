import { describeScenarios } from './scenarios/scenario';
import { expectHighWaterSafe, segmentHighWater } from './scenarios/segment-high-water';

jest.setTimeout(180_000);

// The control (the same faults without the mark re-issue IDs) runs in the full form only
// (segment-max-id-lowered.system-spec.ts): how many IDs it repeats depends on the load.

describeScenarios(
  ['mysql', 'zookeeper'],
  'system (CI subset): max_id lowered and restored under load, two instances sharing a tag',
  {
    'two instances: the trigger refuses the hand edit; without it, the high-water mark repairs each regression once and no ID repeats':
      async (db) => expectHighWaterSafe(await segmentHighWater(db, 'ci', { instances: 2 })),
  },
);
