/**
 * Snowflake worker IDs leased from MariaDB, as a deployer runs the app (environment only, no
 * ZooKeeper, NODE_ENV=production): test/support/database-lease-scenario.ts; and a database
 * that answers only after the start began.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eventually } from '@app/leaf/testing/eventually';
import { runDatabaseLeaseScenario } from '../support/database-lease-scenario';
import { AppProcess, buildIsFresh, killAllAppProcesses, runScript } from '../support/app-process';
import { HttpClient } from '../support/http-client';
import { TcpProxy } from '../support/tcp-proxy';
import { createTestDatabase, type TestDatabase } from '../support/test-database';
import { describeWithServices } from '../support/services';

jest.setTimeout(90_000);

describeWithServices(
  ['mysql'],
  'snowflake worker IDs leased from MariaDB (three processes)',
  () => {
    let db: TestDatabase;
    beforeAll(async () => {
      db = await createTestDatabase({ migrate: true });
    });
    afterAll(async () => {
      await killAllAppProcesses();
      await db?.drop();
    });

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

    it('a database that answers only after the start began: the start waits for it, then serves', async () => {
      const server = new URL(db.url);
      const proxy = new TcpProxy({ host: server.hostname, port: Number(server.port || 3306) });
      await proxy.start();
      proxy.refuse(true);
      const url = new URL(db.url);
      url.host = `127.0.0.1:${proxy.port}`;
      const stateDir = mkdtempSync(join(tmpdir(), 'leaf-lease-late-'));
      const app = AppProcess.spawn(
        {
          NODE_ENV: 'production',
          LEAF_DB_URL: url.toString(),
          LEAF_SNOWFLAKE_ADVERTISE: 'late.test:8080',
          LEAF_STATE_DIR: stateDir,
          PORT: '0',
        },
        { timeoutMs: 60_000 },
      );
      try {
        // The start tried the database and waits (however long a busy machine takes to get there).
        await eventually(
          () =>
            expect(app.stdout).toMatch(
              /Claiming a snowflake worker ID in MySQL\/MariaDB leaf_worker_lease failed/,
            ),
          30_000,
          50,
        );
        await new Promise((resolve) => setTimeout(resolve, 1_000));
        expect(app.alive).toBe(true);
        expect(app.stdout).not.toMatch(/Leaf listening/);
        proxy.refuse(false);
        const port = await app.listening();
        const client = new HttpClient(`http://127.0.0.1:${port}`);
        try {
          expect((await client.send('/api/snowflake/get/k')).status).toBe(200);
        } finally {
          client.close();
        }
        // The operators' CLI lists the lease rows (no ZooKeeper).
        const listed = await runScript('src/cli.ts', ['workers', '--json'], {
          env: { NODE_ENV: 'production', LEAF_DB_URL: db.url },
          timeoutMs: 30_000,
          preferBuild: true,
        });
        expect(listed.code).toBe(0);
        const rows = (JSON.parse(listed.stdout) as { workers: Array<Record<string, unknown>> })
          .workers;
        expect(rows.find((w) => w.heldBy === 'late.test:8080')).toMatchObject({ alive: true });
        expect((await app.stop()).code).toBe(0);
      } finally {
        await proxy.stop();
        rmSync(stateDir, { recursive: true, force: true });
      }
    });
  },
);
