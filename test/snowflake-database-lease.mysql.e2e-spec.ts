/**
 * Snowflake worker IDs leased from MariaDB, as a deployer runs the app (environment only, no
 * ZooKeeper, NODE_ENV=production): test/support/database-lease-scenario.ts.
 */
import { runDatabaseLeaseScenario } from './support/database-lease-scenario';
import { buildIsFresh } from './support/app-process';
import { createTestDatabase, type TestDatabase } from './support/test-database';
import { describeWithServices } from './support/services';

jest.setTimeout(90_000);

describeWithServices(
  ['mysql'],
  'snowflake worker IDs leased from MariaDB (three processes)',
  () => {
    let db: TestDatabase;
    beforeAll(async () => {
      db = await createTestDatabase({ migrate: true });
    });
    afterAll(() => db?.drop());

    it('distinct worker IDs; kill -9 and restart; a paused holder deposed: no duplicate, disjoint milliseconds', async () => {
      expect(buildIsFresh()).toBe(true); // `npm run build` first: three ts-node starts are too slow
      const figures = await runDatabaseLeaseScenario(db.url, (from) =>
        db
          .query(
            `INSERT INTO leaf_worker_lease (name, worker_id, holder, run, epoch, expires_at, horizon)
           SELECT 'leaf', seq, 'elsewhere', 'r', 1, 4611686018427387904, 0 FROM seq_${from}_to_1023`,
          )
          .then(() => undefined),
      );
      console.log(`[figures] MariaDB lease reclaim: ${JSON.stringify(figures)}`);
    });
  },
);
