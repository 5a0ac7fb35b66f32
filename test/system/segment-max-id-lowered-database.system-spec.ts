import { describeScenarios } from './scenarios/scenario';
import { expectHighWaterSafe, segmentHighWater } from './scenarios/segment-high-water';

jest.setTimeout(300_000);

// The scenario of segment-max-id-lowered.e2e-spec.ts with the marks in a database of their
// own (LEAF_SEGMENT_HIGH_WATER_DB_URL) instead of ZooKeeper: a second MariaDB database beside
// the allocation one, and a PostgreSQL database (another server).
describeScenarios(
  ['mysql', 'postgres', 'zookeeper'],
  'system: max_id lowered and restored under load, the high-water mark in a second database',
  {
    'marks in a second MariaDB database: each regression (two lowerings, a restored dump) repaired once, no ID repeats':
      async (db) =>
        expectHighWaterSafe(
          await segmentHighWater(db, 'full', { instances: 2, marks: 'mysql' }),
          'database',
        ),
    'marks in a PostgreSQL database: the same, across servers': async (db) =>
      expectHighWaterSafe(
        await segmentHighWater(db, 'full', { instances: 2, marks: 'postgres' }),
        'database',
      ),
  },
);
