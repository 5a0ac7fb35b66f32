import { describeScenarios } from './scenarios/scenario';
import {
  expectControlDuplicates,
  expectHighWaterSafe,
  segmentHighWater,
} from './scenarios/segment-high-water';
import { expectMaxIdLoweredSafe, segmentMaxIdLowered } from './scenarios/segment-max-id-lowered';

jest.setTimeout(600_000);

describeScenarios(['mysql', 'zookeeper'], 'system: max_id lowered by hand under load', {
  'without the high-water mark, a tag per instance: each refuses the smaller ranges, alerts, and never repeats an ID':
    async (db) => expectMaxIdLoweredSafe(await segmentMaxIdLowered(db, 'full')),
  'with the high-water mark, two instances sharing a tag: lowered by 5,000 and 500,000, a fresh instance, a dump restored a minute later; repaired once each, no ID repeats':
    async (db) => expectHighWaterSafe(await segmentHighWater(db, 'full', { instances: 2 })),
  'with the high-water mark, three instances sharing a tag: the same': async (db) =>
    expectHighWaterSafe(await segmentHighWater(db, 'full', { instances: 3 })),
  'control: the same faults without the high-water mark re-issue IDs': async (db) =>
    expectControlDuplicates(await segmentHighWater(db, 'full', { highWater: false })),
});
