/**
 * CI subset of the snowflake fault matrix (the full one: snowflake-faults.system-spec.ts):
 * five instances at once, a forced session expiry and a 5 s clock rollback, on a private
 * ZooKeeper.
 */
import { describeWithZooKeeperServer } from './harness/zookeeper-server';
import {
  expectExpiryRecovered,
  expectFiveDistinct,
  expectRollbackHandled,
  snowflakeClockRollback,
  snowflakeFiveAtOnce,
  snowflakeSessionExpiry,
} from './scenarios/snowflake-faults';

jest.setTimeout(120_000);

describeWithZooKeeperServer(
  'system (CI subset): snowflake faults',
  (zk) => {
    it('five instances started at once on an empty namespace get worker IDs 0 to 4', async () => {
      expectFiveDistinct(await snowflakeFiveAtOnce(zk(), 'ci'));
    });

    it('a forced session expiry: the instance recovers in a new session, no ID repeats', async () => {
      expectExpiryRecovered(await snowflakeSessionExpiry(zk(), 'ci'));
    });

    it('the clock stepped back 5 s while running: typed 503s, then served, no ID repeats', async () => {
      expectRollbackHandled(await snowflakeClockRollback(zk(), 'ci'));
    });
  },
  { faketime: true },
);
