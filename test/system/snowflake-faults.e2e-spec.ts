/**
 * CI subset of the snowflake fault matrix (the full one: snowflake-faults.system-spec.ts):
 * five instances at once and a forced session expiry, on a private ZooKeeper. The 5 s clock
 * rollback: snowflake-clock-rollback.e2e-spec.ts (its own private ZooKeeper; the two files
 * run in parallel).
 */
import { describeWithZooKeeperServer } from './harness/zookeeper-server';
import {
  expectExpiryRecovered,
  expectFiveDistinct,
  snowflakeFiveAtOnce,
  snowflakeSessionExpiry,
} from './scenarios/snowflake-faults';

jest.setTimeout(120_000);

describeWithZooKeeperServer('system (CI subset): snowflake faults', (zk) => {
  it('five instances started at once on an empty namespace get worker IDs 0 to 4', async () => {
    expectFiveDistinct(await snowflakeFiveAtOnce(zk(), 'ci'));
  });

  it('a forced session expiry: the instance recovers in a new session, no ID repeats', async () => {
    expectExpiryRecovered(await snowflakeSessionExpiry(zk(), 'ci'));
  });
});
