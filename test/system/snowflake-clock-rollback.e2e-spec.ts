/**
 * CI subset of the snowflake fault matrix (the full one: snowflake-faults.system-spec.ts):
 * a 5 s clock rollback (libfaketime), on a private ZooKeeper. The other snowflake faults of
 * the subset: snowflake-faults.e2e-spec.ts.
 */
import { describeWithZooKeeperServer } from './harness/zookeeper-server';
import { expectRollbackHandled, snowflakeClockRollback } from './scenarios/snowflake-faults';

jest.setTimeout(120_000);

describeWithZooKeeperServer(
  'system (CI subset): snowflake clock rollback',
  (zk) => {
    it('the clock stepped back 5 s while running: typed 503s, then served, no ID repeats', async () => {
      expectRollbackHandled(await snowflakeClockRollback(zk(), 'ci'));
    });
  },
  { faketime: true },
);
