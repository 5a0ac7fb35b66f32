/**
 * The snowflake fault matrix (docs/reliability.md, "Snowflake mode"), each scenario at its
 * full size on a private ZooKeeper; `npm run test:system`. The CI subset runs three of them
 * at a smaller size (snowflake-faults.e2e-spec.ts).
 */
import { describeWithZooKeeperServer } from './harness/zookeeper-server';
import {
  expectExpiryRecovered,
  expectFiveDistinct,
  expectNeverBothIssuing,
  expectOutageRiddenOut,
  expectPauseRecovered,
  expectRestartBehindHandled,
  expectRollbackHandled,
  snowflakeAppPaused,
  snowflakeClockRollback,
  snowflakeFiveAtOnce,
  snowflakeRestartClockBehind,
  snowflakeSameIdentity,
  snowflakeSessionExpiry,
  snowflakeZookeeperOutage,
} from './scenarios/snowflake-faults';

jest.setTimeout(300_000);

describeWithZooKeeperServer(
  'system: snowflake faults',
  (zk) => {
    describe('ZooKeeper', () => {
      it('stopped for 20 s under load, then started: served throughout, reconnected', async () => {
        expectOutageRiddenOut(await snowflakeZookeeperOutage(zk(), 'full', 'stop', 20_000));
      });

      it('killed (kill -9) for 20 s under load, then started: served throughout, reconnected', async () => {
        expectOutageRiddenOut(await snowflakeZookeeperOutage(zk(), 'full', 'kill', 20_000));
      });

      it('paused (SIGSTOP) for 10 s under load (longer than the 4 s sessions), then resumed: served throughout, reconnected', async () => {
        expectOutageRiddenOut(await snowflakeZookeeperOutage(zk(), 'full', 'pause', 10_000));
      });

      it('a forced session expiry: the instance recovers in a new session', async () => {
        expectExpiryRecovered(await snowflakeSessionExpiry(zk(), 'full'));
      });

      it('the application paused (SIGSTOP) past its session timeout, then resumed: back in service', async () => {
        expectPauseRecovered(await snowflakeAppPaused(zk(), 'full'));
      });
    });

    describe('clock (libfaketime, monotonic clock real)', () => {
      it('stepped back 5 s while running: typed 503s for about 5 s, then served', async () => {
        expectRollbackHandled(await snowflakeClockRollback(zk(), 'full'));
      });

      it.each([10_000, 1_000])(
        'kill -9, restart with the clock %i ms behind: waits past the first run, then serves above it',
        async (behindMs) => {
          expectRestartBehindHandled(await snowflakeRestartClockBehind(zk(), 'full', behindMs));
        },
      );

      it('stepped back 15 s (beyond the time lease), kill -9 3 s later, restart still behind: waits past every millisecond used', async () => {
        expectRestartBehindHandled(
          await snowflakeRestartClockBehind(zk(), 'full', 15_000, { stepWhileRunning: true }),
        );
      });
    });

    describe('worker IDs', () => {
      it('five instances started at once on an empty namespace: worker IDs 0 to 4', async () => {
        expectFiveDistinct(await snowflakeFiveAtOnce(zk(), 'full'));
      });

      it('same identity: the first paused past its session timeout while the second starts, then resumed: never both issuing', async () => {
        expectNeverBothIssuing(await snowflakeSameIdentity(zk(), 'full'));
      });
    });
  },
  { faketime: true },
);
