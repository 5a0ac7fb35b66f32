/**
 * Snowflake worker IDs leased from PostgreSQL, as a deployer runs the app (environment only,
 * no ZooKeeper, NODE_ENV=production): test/support/database-lease-scenario.ts; and a database
 * cut off for longer than the lease, then back.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runDatabaseLeaseScenario } from './support/database-lease-scenario';
import { AppProcess, buildIsFresh, killAllAppProcesses } from './support/app-process';
import { HttpClient } from './support/http-client';
import { TcpProxy } from './support/tcp-proxy';
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
             SELECT 'leaf', g, 'elsewhere', 'r', 1, 4611686018427387904, 0 FROM generate_series($1::int, 1023) AS g`,
            [from],
          )
          .then(() => undefined),
      );
      console.log(`[figures] PostgreSQL lease reclaim: ${JSON.stringify(figures)}`);
    });

    it('a database cut off past the lease: 503 once the lease runs out, served again once it answers (same epoch)', async () => {
      const server = new URL(db.url);
      const proxy = new TcpProxy({ host: server.hostname, port: Number(server.port || 5432) });
      await proxy.start();
      const url = new URL(db.url);
      url.host = `127.0.0.1:${proxy.port}`;
      const stateDir = mkdtempSync(join(tmpdir(), 'leaf-lease-cut-'));
      const app = AppProcess.spawn(
        {
          NODE_ENV: 'production',
          LEAF_DB_URL: url.toString(),
          LEAF_SNOWFLAKE_ADVERTISE: 'cut.test:8080',
          LEAF_STATE_DIR: stateDir,
          LEAF_SNOWFLAKE_LEASE_MS: '3000',
          LEAF_SNOWFLAKE_HEARTBEAT_MS: '1000',
          LEAF_SNOWFLAKE_LEASE_MARGIN_MS: '500',
          PORT: '0',
        },
        { timeoutMs: 60_000 },
      );
      const client = new HttpClient(`http://127.0.0.1:${await app.listening()}`, 2);
      const issued: bigint[] = [];
      const get = async () => {
        const answer = await client.send('/api/snowflake/get/k');
        if (answer.status === 200) issued.push(BigInt(answer.body));
        return answer;
      };
      const until = async (ok: (status: number, body: string) => boolean, withinMs: number) => {
        const deadline = Date.now() + withinMs;
        for (;;) {
          const answer = await get();
          if (ok(answer.status, answer.body)) return answer;
          if (Date.now() > deadline) throw new Error(`still ${answer.status}: ${answer.body}`);
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
      };
      try {
        expect((await get()).status).toBe(200);
        proxy.refuse(true);
        const cutAt = Date.now();
        const refused = await until((status) => status === 503, 6_000);
        const servedAfterCutMs = Date.now() - cutAt;
        expect(refused.body).toMatch(/LEAF_TIME_LEASE_UNAVAILABLE/);
        expect((await client.send('/health/ready/snowflake')).status).toBe(503);
        // Every ID was within a horizon already in the row (read past the proxy).
        const [row] = await db.query<{ horizon: string; epoch: string }>(
          "SELECT CAST(horizon AS text) AS horizon, CAST(epoch AS text) AS epoch FROM leaf_worker_lease WHERE holder = 'cut.test:8080'",
        );
        const last = Math.max(...issued.map((id) => Number(id >> 22n) + 1_288_834_974_657));
        expect(last).toBeLessThanOrEqual(Number(row!.horizon));
        proxy.refuse(false);
        await until((status) => status === 200, 10_000);
        const ready = await client.send('/health/ready/snowflake');
        expect(ready.status).toBe(200);
        expect(JSON.parse(ready.body)).toMatchObject({
          details: { snowflake: { epoch: row!.epoch } },
        });
        console.log(`[figures] PostgreSQL cut: served ${servedAfterCutMs} ms after the cut`);
        expect(new Set(issued).size).toBe(issued.length);
        expect((await app.stop()).code).toBe(0);
      } finally {
        client.close();
        await proxy.stop();
        rmSync(stateDir, { recursive: true, force: true });
      }
    });
  },
);
