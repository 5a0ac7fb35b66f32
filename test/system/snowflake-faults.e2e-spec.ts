/**
 * CI subset of the snowflake fault matrix (the full one: snowflake-faults.system-spec.ts):
 * five instances at once, a forced session expiry and a 5 s clock rollback, on a private
 * ZooKeeper.
 */
import { faketimeAvailable } from '../support/faketime';
import { describeWhen } from '../support/services';
import {
  ZOOKEEPER_REQUIREMENT,
  ZooKeeperServer,
  zookeeperInstalled,
} from './harness/zookeeper-server';
import {
  expectExpiryRecovered,
  expectFiveDistinct,
  expectRollbackHandled,
  snowflakeClockRollback,
  snowflakeFiveAtOnce,
  snowflakeSessionExpiry,
} from './scenarios/snowflake-faults';

jest.setTimeout(120_000);

describeWhen(
  zookeeperInstalled() && faketimeAvailable(),
  `${ZOOKEEPER_REQUIREMENT}, and libfaketime (\`bash scripts/services.sh faketime\`)`,
  'system (CI subset): snowflake faults',
  () => {
    let zk: ZooKeeperServer;

    beforeAll(async () => {
      zk = await ZooKeeperServer.start();
    }, 60_000);

    afterAll(async () => {
      await zk?.dispose();
    }, 30_000);

    it('five instances started at once on an empty namespace get worker IDs 0 to 4', async () => {
      expectFiveDistinct(await snowflakeFiveAtOnce(zk, 'ci'));
    });

    it('a forced session expiry: the instance recovers in a new session, no ID repeats', async () => {
      expectExpiryRecovered(await snowflakeSessionExpiry(zk, 'ci'));
    });

    it('the clock stepped back 5 s while running: typed 503s, then served, no ID repeats', async () => {
      expectRollbackHandled(await snowflakeClockRollback(zk, 'ci'));
    });
  },
);
