/**
 * Several databases per tag (docs/design.md, "Several databases per tag") on two real
 * databases of the shared MariaDB, and of the shared PostgreSQL: through the library (two
 * LeafModule instances on both databases, one database lost and back) and through the
 * application (`LEAF_DB_URLS`).
 */
import { ScheduleModule } from '@nestjs/schedule';
import { Test, type TestingModule } from '@nestjs/testing';
import type { DataSource } from 'typeorm';
import { LeafErrorCode, LeafModule, SegmentService } from 'nestjs-leaf';
import { expectLeafError, inject, startApp } from './support/app';
import { SERVER_FLAVOURS, type ServerTestDatabase } from './support/server-databases';
import { describeWithServices } from './support/services';

jest.setTimeout(60_000);

/** Inserts `tag` with the residue class `residue (mod modulus)`. */
async function addTag(
  db: ServerTestDatabase,
  tag: string,
  modulus: number,
  residue: number,
  maxId = 1,
): Promise<void> {
  // Literals (integers and a plain tag): the same statement on MariaDB and PostgreSQL.
  await db.query(
    `INSERT INTO leaf_alloc (biz_tag, max_id, step, id_modulus, id_residue) VALUES ('${tag}', ${maxId}, 100, ${modulus}, ${residue})`,
  );
}

async function instance(dataSources: DataSource[]): Promise<TestingModule> {
  const module = await Test.createTestingModule({
    imports: [
      ScheduleModule.forRoot(),
      LeafModule.forRoot({
        // Generous: under CI load a slow answer would mark a database down, which is not
        // what these tests are about (losing one is done by renaming its table away).
        segment: { dataSources, databaseTimeoutMs: 10_000 },
        snowflake: false,
      }),
    ],
  }).compile();
  await module.init();
  return module;
}

for (const flavour of SERVER_FLAVOURS) {
  describeWithServices(
    [flavour.service],
    `several databases per tag (two real ${flavour.label} databases)`,
    () => {
      let a: ServerTestDatabase;
      let b: ServerTestDatabase;

      beforeAll(async () => {
        [a, b] = await Promise.all([
          flavour.create({ migrate: true }),
          flavour.create({ migrate: true }),
        ]);
        // The application's demo-tag seed put the same row, class (1, 0), in both: a clash.
        for (const db of [a, b])
          await db.query("DELETE FROM leaf_alloc WHERE biz_tag = 'leaf-segment-test'");
        await addTag(a, 'order', 2, 0);
        await addTag(b, 'order', 2, 1, 500); // max_id anywhere: the classes keep them apart
      });

      afterAll(async () => {
        await Promise.all([a?.drop(), b?.drop()]);
      });

      it('library: two instances serve both classes without a duplicate, and keep serving while one database is gone', async () => {
        const sources = await Promise.all(
          [a, b, a, b].map((db) => db.openDataSource({ overrides: { poolSize: 4 } })),
        );
        const one = await instance([sources[0]!, sources[1]!]);
        const two = await instance([sources[3]!, sources[2]!]); // the order does not matter
        try {
          const services = [one.get(SegmentService), two.get(SegmentService)];
          const ids: bigint[] = [];
          const draw = async (n: number) => {
            for (let i = 0; i < n; i++) {
              const batch = await Promise.all(services.map((s) => s.getIds('order', 7)));
              ids.push(...batch.flat());
            }
          };
          await draw(60);
          expect(new Set(ids.map((id) => id % 2n))).toEqual(new Set([0n, 1n]));

          // Database b gone (its table renamed away): every ID now comes from a.
          await b.query('ALTER TABLE leaf_alloc RENAME TO leaf_alloc_away');
          const before = ids.length;
          await draw(120);
          const readiness = services[0]!.readiness();
          expect(readiness.databases?.sources.map((s) => s.state)).toEqual(['up', 'down']);
          expect(readiness.databases?.sources[1]?.lastError).toMatch(/leaf_alloc/);
          expect([readiness.ready, readiness.reason]).toEqual([true, undefined]);
          const during = ids.slice(before);
          // Only what was already in memory from b; the rest from a.
          expect(during.filter((id) => id % 2n === 0n).length).toBeGreaterThan(during.length / 2);

          // Back: b is asked again once its back-off (doubling per failure, at most 15 s) ends.
          await b.query('ALTER TABLE leaf_alloc_away RENAME TO leaf_alloc');
          const bUp = () =>
            services.every((s) => s.readiness().databases?.sources[1]?.state === 'up');
          const deadline = Date.now() + 20_000;
          while (!bUp() && Date.now() < deadline) {
            await draw(20);
            await new Promise((resolve) => setTimeout(resolve, 100));
          }
          expect(bUp()).toBe(true);
          // Its range is the next segment: served once the current one is used up.
          const back = ids.length;
          const served = () => ids.slice(back).some((id) => id % 2n === 1n);
          while (!served() && ids.length - back < 100_000) await draw(50);
          expect(ids.slice(back).some((id) => id % 2n === 1n)).toBe(true);

          expect(new Set(ids).size).toBe(ids.length);
        } finally {
          await b.query('ALTER TABLE leaf_alloc_away RENAME TO leaf_alloc').catch(() => undefined);
          await one.close();
          await two.close();
          await Promise.all(sources.map((ds) => ds.destroy()));
        }
      });

      it('app: LEAF_DB_URLS serves both classes; /cache and readiness show each database; a clash and a missing tag are shown, never served', async () => {
        await addTag(a, 'clash', 2, 1);
        await addTag(b, 'clash', 2, 1);
        await addTag(a, 'lonely', 2, 0);
        const app = await startApp({
          LEAF_DB_URLS: `${a.url},${b.url}`,
          LEAF_SNOWFLAKE_ENABLED: 'false',
          // The default (1 s) marks a database down when CI load slows one answer.
          LEAF_SEGMENT_DATABASE_TIMEOUT_MS: '10000',
        });
        try {
          const ids: bigint[] = [];
          for (let i = 0; i < 300; i++) {
            const answer = await inject(app, '/api/segment/get/order');
            expect(answer.statusCode).toBe(200);
            ids.push(BigInt(answer.body));
          }
          expect(new Set(ids).size).toBe(ids.length);
          expect(new Set(ids.map((id) => id % 2n))).toEqual(new Set([0n, 1n]));

          const cache = await inject(app, '/cache', { headers: { accept: 'application/json' } });
          const snapshot = JSON.parse(cache.body) as {
            databases: Array<{ state: string; lastError: unknown }>;
          };
          // With its last error, so a failure says why a database was marked down.
          expect(snapshot.databases.map((d) => [d.state, d.lastError])).toEqual([
            ['up', null],
            ['up', null],
          ]);
          expect((await inject(app, '/cache')).body).toContain('<h2>Databases</h2>');

          // A contiguous range cannot be cut from a residue class.
          expectLeafError(
            await inject(app, '/api/segment/range/order?count=5'),
            400,
            LeafErrorCode.INVALID_ARGUMENT,
          );
          // Two databases giving "clash" the same class: refused, never served.
          expect((await inject(app, '/api/segment/get/clash')).statusCode).toBe(503);

          const ready = await inject(app, '/health/ready/segment');
          expect(ready.statusCode).toBe(503);
          const body = JSON.parse(ready.body) as {
            details: { segment: { message: string; databases: { problems: unknown[] } } };
          };
          expect(body.details.segment.message).toMatch(/clash: .* share IDs/);
          expect(body.details.segment.message).toMatch(/lonely: no row in/);
          expect(body.details.segment.databases.problems).toHaveLength(2);
        } finally {
          await app.close();
        }
      });
    },
  );
}
