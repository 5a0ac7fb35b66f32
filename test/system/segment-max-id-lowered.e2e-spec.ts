import { describeScenarios } from './scenarios/scenario';
import {
  expectControlDuplicates,
  expectHighWaterSafe,
  segmentHighWater,
} from './scenarios/segment-high-water';

jest.setTimeout(180_000);

describeScenarios(
  ['mysql', 'zookeeper'],
  'system (CI subset): max_id lowered and restored under load, two instances sharing a tag',
  {
    'two instances: the trigger refuses the hand edit; without it, the high-water mark repairs each regression once and no ID repeats':
      async (db) => expectHighWaterSafe(await segmentHighWater(db, 'ci', { instances: 2 })),
    'control: the same faults without the high-water mark re-issue IDs': async (db) =>
      expectControlDuplicates(await segmentHighWater(db, 'ci', { highWater: false })),
  },
);
