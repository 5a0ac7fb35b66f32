import { describeScenarios } from './scenarios/scenario';
import { expectHighWaterSafe, segmentHighWater } from './scenarios/segment-high-water';

// Its own file, so that each short form stays well under a minute.
jest.setTimeout(180_000);

describeScenarios(
  ['mysql', 'zookeeper'],
  'system (CI subset): max_id lowered and restored under load, three instances sharing a tag',
  {
    'the trigger refuses the hand edit; without it, the high-water mark repairs each regression once and no ID repeats':
      async (db) => expectHighWaterSafe(await segmentHighWater(db, 'ci', { instances: 3 })),
  },
);
