/**
 * Snowflake worker IDs leased from PostgreSQL, as a deployer runs the app (environment only,
 * no ZooKeeper, NODE_ENV=production): test/support/database-lease-scenario.ts.
 */
import { runDatabaseLeaseScenario } from './support/database-lease-scenario';
import { buildIsFresh } from './support/app-process';
import { createPostgresTestDatabase, type PostgresTestDatabase } from './support/postgres-database';
import { describeWithServices } from './support/services';

jest.setTimeout(90_000);

describeWithServices(
  ['postgres'],
  'snowflake worker IDs leased from PostgreSQL (three processes)',
  () => {
    let db: PostgresTestDatabase;
    beforeAll(async () => {
      db = await createPostgresTestDatabase({ migrate: true });
    });
    afterAll(() => db?.drop());

    it('distinct worker IDs; kill -9 and restart; a paused holder deposed: no duplicate, disjoint milliseconds', async () => {
      expect(buildIsFresh()).toBe(true); // `npm run build` first: three ts-node starts are too slow
      const figures = await runDatabaseLeaseScenario(db.url, (from) =>
        db
          .query(
            `INSERT INTO leaf_worker_lease (name, worker_id, holder, run, epoch, expires_at, horizon)
             SELECT 'leaf', g, 'elsewhere', 'r', 1, 4611686018427387904, 0 FROM generate_series($1::int, 1023) AS g`,
            [from],
          )
          .then(() => undefined),
      );
      console.log(`[figures] PostgreSQL lease reclaim: ${JSON.stringify(figures)}`);
    });
  },
);
