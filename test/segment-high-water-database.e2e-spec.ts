/**
 * The high-water mark in a database of its own (TypeormHighWaterStore, library level), as
 * test/segment-high-water.e2e-spec.ts proves the ZooKeeper one: on MariaDB and on
 * PostgreSQL, with the marks in a second database of the same server, a restored
 * `leaf_alloc` row (`max_id` back to an old value) is repaired once by the next allocation,
 * of any instance, instead of re-served; the hand-back lowers mark and row together; with
 * the marks' database unreachable nothing is allocated. And the application with
 * `LEAF_SEGMENT_HIGH_WATER_DB_URL`: the marks' schema migrated there, readiness naming the
 * store, the allocation database refused.
 */
import { randomBytes } from 'node:crypto';
import type { DataSource } from 'typeorm';
import {
  createLeafAllocStore,
  LEAF_HIGH_WATER_MIGRATIONS,
  TypeormHighWaterStore,
} from 'nestjs-leaf/storage/typeorm';
import { LeafErrorCode } from 'nestjs-leaf';
import { rejectionOf } from '@app/leaf/testing/test-helpers';
import { inject, startApp, tempDir } from './support/app';
import { SERVER_FLAVOURS, type ServerTestDatabase } from './support/server-databases';
import { describeWithServices } from './support/services';

jest.setTimeout(30_000);

for (const flavour of SERVER_FLAVOURS) {
  describeWithServices(
    [flavour.service],
    `segment high-water mark in a second ${flavour.label} database`,
    () => {
      let allocation: ServerTestDatabase;
      let marksDb: ServerTestDatabase;
      let dataSource: DataSource;
      let marksSource: DataSource;
      const name = `hwdb-${randomBytes(4).toString('hex')}`;

      beforeAll(async () => {
        allocation = await flavour.create({ migrate: true });
        marksDb = await flavour.create();
        dataSource = await allocation.openDataSource();
        marksSource = await marksDb.openDataSource({
          migrate: true,
          overrides: { migrations: LEAF_HIGH_WATER_MIGRATIONS, entities: [] },
        });
      });

      afterAll(async () => {
        await dataSource?.destroy();
        await marksSource?.destroy();
        await allocation?.drop();
        await marksDb?.drop();
      });

      /** One instance: its own store, fenced by the marks' database. */
      const instance = () =>
        createLeafAllocStore(dataSource, {
          highWater: new TypeormHighWaterStore(marksSource, name),
        });
      const insert = (tag: string, maxId: bigint) =>
        allocation.query(
          `INSERT INTO leaf_alloc (biz_tag, max_id, step) VALUES ('${tag}', ${maxId}, 1000)`,
        );
      /** A restore of an old dump of the row (delete and insert: no update trigger fires). */
      const restore = async (tag: string, maxId: bigint) => {
        await allocation.query(`DELETE FROM leaf_alloc WHERE biz_tag = '${tag}'`);
        await insert(tag, maxId);
      };
      const markOf = async (tag: string) =>
        (await new TypeormHighWaterStore(marksSource, name).read(tag))?.value ?? null;

      it('repairs a restored max_id once, in the allocation that finds it, across instances', async () => {
        await insert('hwdb-a', 1n);
        const a = instance();
        expect(await a.allocate('hwdb-a')).toMatchObject({ maxId: 1001n, repair: null });
        expect(await markOf('hwdb-a')).toBe(1001n);
        expect((await instance().allocate('hwdb-a')).maxId).toBe(2001n);
        await restore('hwdb-a', 1n);
        // A third instance that never saw the lost ranges starts above them.
        const repaired = await instance().allocate('hwdb-a');
        expect(repaired).toMatchObject({
          maxId: 3001n,
          repair: { maxId: 1n, highWater: 2001n, kind: 'regression' },
        });
        expect(await a.allocate('hwdb-a')).toMatchObject({ maxId: 4001n, repair: null });
        expect(await allocation.maxId('hwdb-a')).toBe('4001');
        expect(await markOf('hwdb-a')).toBe(4001n);
      });

      it('hand-back: lowers the mark and max_id from exactly ours; not ours, nothing is lowered', async () => {
        await insert('hwdb-b', 1n);
        const a = instance();
        await a.allocate('hwdb-b');
        expect(await a.handBack('hwdb-b', 1001n, 301n)).toBe(true);
        expect(await allocation.maxId('hwdb-b')).toBe('301');
        expect(await markOf('hwdb-b')).toBe(301n);
        expect(await instance().allocate('hwdb-b')).toMatchObject({ maxId: 1301n, repair: null });
        expect(await a.handBack('hwdb-b', 1001n, 500n)).toBe(false);
        expect(await allocation.maxId('hwdb-b')).toBe('1301');
      });

      it('refuses to allocate (LEAF_HIGH_WATER_UNAVAILABLE) while the marks database is unreachable, writing nothing', async () => {
        await insert('hwdb-c', 1n);
        const closed = await marksDb.openDataSource();
        await closed.destroy();
        const store = createLeafAllocStore(dataSource, {
          highWater: new TypeormHighWaterStore(closed, name),
        });
        const error = await rejectionOf(store.allocate('hwdb-c'));
        expect(error).toMatchObject({ code: LeafErrorCode.HIGH_WATER_UNAVAILABLE, tag: 'hwdb-c' });
        expect(await allocation.maxId('hwdb-c')).toBe('1');
      });

      it('app: LEAF_SEGMENT_HIGH_WATER_DB_URL migrates leaf_high_water there, marks every range, readiness names the store; the allocation database is refused', async () => {
        const app = await flavour.create();
        const marks = await flavour.create();
        const state = tempDir('leaf-hw-db-app');
        const env = {
          LEAF_DB_URL: app.url,
          LEAF_DB_MIGRATE: 'true',
          LEAF_SEGMENT_HIGH_WATER_DB_URL: marks.url,
          LEAF_SNOWFLAKE_ENABLED: 'false',
          LEAF_STATE_DIR: state.path,
          LEAF_NAME: name,
        };
        try {
          const leaf = await startApp(env);
          try {
            const first = await inject(leaf, '/api/segment/get/leaf-segment-test');
            expect(first).toMatchObject({ statusCode: 200, body: '1' });
            const ready = await inject(leaf, '/health/ready/segment');
            expect(ready.statusCode).toBe(200);
            const details = (
              JSON.parse(ready.body) as {
                info: {
                  segment: { highWater: string; highWaterStore: string; highWaterAt: string };
                };
              }
            ).info.segment;
            expect(details).toMatchObject({ highWater: 'on', highWaterStore: 'database' });
            expect(details.highWaterAt).toMatch(new RegExp(`/${marks.name}$`));
          } finally {
            await leaf.close();
          }
          // The range served and the one handed back at the stop: the mark is the row's max_id.
          // Both drivers return BIGINT as a decimal string (bigNumberStrings; pg's int8).
          const [row] = await marks.query<{ hw_key: string; mark: string }>(
            `SELECT hw_key, mark FROM leaf_high_water WHERE leaf_name = '${name}'`,
          );
          expect(row).toEqual({
            hw_key: 'leaf-segment-test',
            mark: await app.maxId('leaf-segment-test'),
          });
          const schema = flavour.service === 'mysql' ? 'DATABASE()' : 'current_schema()';
          expect(
            await marks.query(
              `SELECT table_name FROM information_schema.tables WHERE table_schema = ${schema} AND table_name IN ('leaf_alloc', 'leaf_high_water')`,
            ),
          ).toEqual([{ table_name: 'leaf_high_water' }]);
          await expect(
            startApp({ ...env, LEAF_SEGMENT_HIGH_WATER_DB_URL: app.url }),
          ).rejects.toThrow(
            /LEAF_SEGMENT_HIGH_WATER_DB_URL names the allocation database of LEAF_DB_URL/,
          );
        } finally {
          state.remove();
          await app.drop();
          await marks.drop();
        }
      });
    },
  );
}
