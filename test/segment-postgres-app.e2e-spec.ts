/**
 * The application on PostgreSQL, from its environment only (`LEAF_DB_URL=postgres://…`), with
 * the grants docs/operations.md names: a migration account with `CREATE` on the schema runs
 * `migrate` (src/database/migrate.ts) and the TypeORM CLI's data source
 * (migrations/data-source.ts) sees the result; a service account with `SELECT, INSERT,
 * UPDATE` on `leaf_alloc` only runs two applications on one tag (no duplicate), the admin API
 * creating a tag on one that the other serves at once.
 */
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { Client } from 'pg';
import type { DataSource } from 'typeorm';
import { migrate } from '../src/database/migrate';
import { inject, startApp, tempDir } from './support/app';
import { HttpClient } from './support/http-client';
import { createPostgresTestDatabase, type PostgresTestDatabase } from './support/postgres-database';
import { POSTGRES_TEST_URL, describeWithServices } from './support/services';

jest.setTimeout(90_000);

const TOKEN = 'e2e-admin-token-0123456789abcdef';
const TAG = 'pg-shared';
const REQUESTS_PER_APP = 600;
const CONNECTIONS_PER_APP = 8;

/** `url` with another user. */
function as(url: string, user: string): string {
  const parsed = new URL(url);
  parsed.username = user;
  return parsed.toString();
}

/** Every ID `REQUESTS_PER_APP` requests of `get` and `ids?count=5` received from one app. */
async function load(baseUrl: string): Promise<bigint[]> {
  const all: bigint[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: CONNECTIONS_PER_APP }, async () => {
      const client = new HttpClient(baseUrl, 1);
      try {
        while (next < REQUESTS_PER_APP) {
          const batch = next++ % 2 === 1;
          const answer = await client.send(
            `/api/segment/${batch ? 'ids' : 'get'}/${TAG}${batch ? '?count=5' : ''}`,
          );
          expect(answer.status).toBe(200);
          if (batch) all.push(...(JSON.parse(answer.body) as { ids: string[] }).ids.map(BigInt));
          else all.push(BigInt(answer.body));
        }
      } finally {
        client.close();
      }
    }),
  );
  return all;
}

describeWithServices(['postgres'], 'the application on PostgreSQL', () => {
  let db: PostgresTestDatabase;
  let migrator: string;
  let service: string;
  const state = tempDir('leaf-postgres-app');
  let a: NestFastifyApplication | undefined;
  let b: NestFastifyApplication | undefined;

  const serviceEnv = (extra: Record<string, string> = {}) => ({
    LEAF_DB_URL: as(db.url, service),
    LEAF_SNOWFLAKE_ENABLED: 'false',
    LEAF_STATE_DIR: state.path,
    ...extra,
  });

  beforeAll(async () => {
    db = await createPostgresTestDatabase();
    const suffix = db.name.slice('leaf_test_'.length);
    migrator = `leaf_migrate_${suffix}`;
    service = `leaf_app_${suffix}`;
    for (const sql of [
      `CREATE ROLE ${migrator} LOGIN`,
      `CREATE ROLE ${service} LOGIN`,
      `GRANT CONNECT ON DATABASE ${db.name} TO ${migrator}, ${service}`,
      `GRANT USAGE, CREATE ON SCHEMA public TO ${migrator}`,
      `GRANT USAGE ON SCHEMA public TO ${service}`,
    ])
      await db.query(sql);
  });

  afterAll(async () => {
    await a?.close();
    await b?.close();
    await db?.drop();
    const admin = new Client({ connectionString: POSTGRES_TEST_URL });
    await admin.connect();
    try {
      for (const role of [migrator, service])
        if (role) await admin.query(`DROP ROLE IF EXISTS ${role}`);
    } finally {
      await admin.end();
    }
    state.remove();
  });

  it('migrates with the migration account (npm run migrate), and the TypeORM CLI’s data source sees it', async () => {
    const out: string[] = [];
    const env = { NODE_ENV: 'production', LEAF_DB_URL: as(db.url, migrator) };
    expect(
      await migrate(
        'run',
        env,
        (line) => out.push(line),
        (line) => out.push(line),
      ),
    ).toBe(0);
    expect(out.at(-1)).toBe('Applied 9 migration(s) to PostgreSQL');
    expect(await migrate('status', env, (line) => out.push(line))).toBe(0);
    expect(out.at(-1)).toBe('0 pending migration(s) on PostgreSQL');

    // The service account may use the tables (leaf_alloc; the worker-ID leases and the
    // sequence election it holds there without ZooKeeper; the ID journal, written only), and
    // nothing more.
    await db.query(
      `GRANT SELECT, INSERT, UPDATE ON leaf_alloc, leaf_worker_lease, leaf_sequence_issuer TO ${service}`,
    );
    await db.query(
      `GRANT SELECT, INSERT ON leaf_alloc_journal, leaf_worker_lease_journal TO ${service}`,
    );

    // migrations/data-source.ts reads LEAF_DB_URL when it is loaded, as under the CLI.
    const saved = { ...process.env };
    let dataSource!: DataSource;
    try {
      Object.assign(process.env, env);
      await jest.isolateModulesAsync(async () => {
        dataSource = (await import('../migrations/data-source')).default;
      });
    } finally {
      process.env = saved;
    }
    expect(dataSource.options.type).toBe('postgres');
    await dataSource.initialize();
    try {
      expect(await dataSource.showMigrations()).toBe(false);
    } finally {
      await dataSource.destroy();
    }
  });

  it('serves the demo tag and a tag created through the admin API on one app from the other at once', async () => {
    a = await startApp(serviceEnv({ LEAF_ADMIN_TOKEN: TOKEN }), { listen: true });
    b = await startApp(serviceEnv(), { listen: true });
    expect((await inject(a, '/api/segment/get/leaf-segment-test')).body).toBe('1');

    const created = await a
      .getHttpAdapter()
      .getInstance()
      .inject({
        method: 'POST',
        url: '/admin/tags',
        headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
        payload: JSON.stringify({ biz_tag: TAG, step: 10, description: 'two apps' }),
      });
    expect(created.statusCode).toBe(201);
    expect(JSON.parse(created.body)).toMatchObject({ biz_tag: TAG, max_id: '1', step: 10 });
    expect((await inject(b, `/api/segment/get/${TAG}`)).body).toBe('1');
    expect((await inject(a, `/api/segment/get/${TAG}`)).body).toBe('11');
    expect((await inject(b, '/health/ready')).statusCode).toBe(200);
  });

  it(`issues no duplicate across ${2 * REQUESTS_PER_APP} concurrent requests to two apps on one tag`, async () => {
    const [fromA, fromB] = await Promise.all([
      load(HttpClient.baseUrlOf(a!)),
      load(HttpClient.baseUrlOf(b!)),
    ]);
    const everything = [...fromA, ...fromB];
    expect(new Set(everything).size).toBe(everything.length);
    const maxId = BigInt((await db.maxId(TAG))!);
    expect(everything.every((id) => id >= 1n && id < maxId)).toBe(true);
    // The two really interleaved on the row lock (step 10: a range every few requests).
    const max = (ids: bigint[]) => ids.reduce((x, y) => (x > y ? x : y));
    const min = (ids: bigint[]) => ids.reduce((x, y) => (x < y ? x : y));
    expect(min(fromB)).toBeLessThan(max(fromA));
    expect(min(fromA)).toBeLessThan(max(fromB));
  });

  it('leaves the service account unable to lower max_id (the trigger), and without DDL', async () => {
    const session = new Client({ connectionString: as(db.url, service) });
    await session.connect();
    try {
      await expect(
        session.query(`UPDATE leaf_alloc SET max_id = max_id - 1 WHERE biz_tag = '${TAG}'`),
      ).rejects.toThrow(/may not be lowered/);
      await expect(session.query('CREATE TABLE nope (x int)')).rejects.toThrow(/permission denied/);
    } finally {
      await session.end();
    }
  });
});
