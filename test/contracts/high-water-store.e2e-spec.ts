/**
 * The HighWaterStore contract on TypeormHighWaterStore against real MariaDB and PostgreSQL
 * (a database of this file's own, schema from LEAF_HIGH_WATER_MIGRATIONS), and what the
 * contract cannot say: a database that is not connected, does not answer in time or lacks
 * the table is LEAF_HIGH_WATER_UNAVAILABLE; the migration refuses to drop held marks.
 */
import { DataSource } from 'typeorm';
import { LEAF_HIGH_WATER_MIGRATIONS, TypeormHighWaterStore } from 'nestjs-leaf/storage/typeorm';
import { HighWaterUnavailableError } from '@app/leaf/core/errors/allocation.error';
import { highWaterStoreContract } from '@app/leaf/testing/contracts/high-water-store.contract';
import { rejectionOf } from '@app/leaf/testing/test-helpers';
import { SERVER_FLAVOURS, type ServerTestDatabase } from '../support/server-databases';
import { describeWithServices } from '../support/services';

jest.setTimeout(30_000);

for (const flavour of SERVER_FLAVOURS) {
  describeWithServices([flavour.service], `HighWaterStore on ${flavour.label}`, () => {
    let db: ServerTestDatabase;
    let dataSource: DataSource;
    const marksOptions = { migrations: LEAF_HIGH_WATER_MIGRATIONS, entities: [] };

    beforeAll(async () => {
      db = await flavour.create();
      dataSource = await db.openDataSource({ migrate: true, overrides: marksOptions });
    });

    afterAll(async () => {
      await dataSource?.destroy();
      await db?.drop();
    });

    highWaterStoreContract(`TypeormHighWaterStore on ${flavour.label}`, async () => ({
      storeFor: (name) => new TypeormHighWaterStore(dataSource, name),
      close: async () => undefined,
    }));

    it('creates leaf_high_water only (no leaf_alloc: the marks live outside the allocation database)', async () => {
      expect(await dataSource.createQueryRunner().hasTable('leaf_high_water')).toBe(true);
      expect(await dataSource.createQueryRunner().hasTable('leaf_alloc')).toBe(false);
    });

    it('is LEAF_HIGH_WATER_UNAVAILABLE while its DataSource is not connected', async () => {
      const closed = new DataSource(db.dataSourceOptions(marksOptions));
      const store = new TypeormHighWaterStore(closed, 'app');
      expect(store.available).toBe(false);
      const error = await rejectionOf(store.read('order'));
      expect(error).toBeInstanceOf(HighWaterUnavailableError);
      expect(error).toMatchObject({ code: 'LEAF_HIGH_WATER_UNAVAILABLE', tag: 'order' });
    });

    it('bounds a call by callTimeoutMs (a write stuck behind a row lock), then recovers', async () => {
      const store = new TypeormHighWaterStore(dataSource, 'stuck', { callTimeoutMs: 300 });
      await store.write('order', 10n, null);
      const mark = (await store.read('order'))!;
      const holder = dataSource.createQueryRunner();
      await holder.startTransaction();
      try {
        await holder.query(
          "UPDATE leaf_high_water SET updated_at = updated_at WHERE leaf_name = 'stuck'",
        );
        const started = Date.now();
        const error = await rejectionOf(store.write('order', 20n, mark));
        expect(error).toBeInstanceOf(HighWaterUnavailableError);
        expect((error as Error).message).toMatch(/within 300 ms/);
        expect(Date.now() - started).toBeLessThan(2000);
        expect(store.available).toBe(false);
      } finally {
        await holder.rollbackTransaction();
        await holder.release();
      }
      // The stuck UPDATE may have been applied once the lock went: either way the mark is
      // at least what it was, and the store answers again.
      const after = (await store.read('order'))!;
      expect(after.value === 10n || after.value === 20n).toBe(true);
      expect(store.available).toBe(true);
    });

    it('is LEAF_HIGH_WATER_UNAVAILABLE, naming the cause, when the table is missing', async () => {
      const bare = await flavour.create();
      const source = await bare.openDataSource();
      try {
        const error = await rejectionOf(new TypeormHighWaterStore(source, 'app').read('order'));
        expect(error).toBeInstanceOf(HighWaterUnavailableError);
        expect((error as Error).message).toMatch(/leaf_high_water/);
      } finally {
        await source.destroy();
        await bare.drop();
      }
    });

    it('the migration refuses to drop the table while it holds marks', async () => {
      await new TypeormHighWaterStore(dataSource, 'kept').write('order', 5n, null);
      await expect(dataSource.undoLastMigration()).rejects.toThrow(/holds high-water marks/);
      expect(await dataSource.createQueryRunner().hasTable('leaf_high_water')).toBe(true);
    });

    it('refuses a driver other than MySQL/MariaDB or PostgreSQL', () => {
      const sqlite = new DataSource({ type: 'better-sqlite3', database: ':memory:' });
      expect(() => new TypeormHighWaterStore(sqlite, 'app')).toThrow(/unsupported driver/);
    });
  });
}
