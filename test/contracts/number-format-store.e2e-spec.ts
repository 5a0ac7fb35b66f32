/**
 * The NumberFormatStore contract on the TypeORM store (`leaf_number_format` and the
 * database's clock) against real MariaDB, PostgreSQL and a SQLite file, each in a database of
 * this file's own with the schema from the migrations.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataSource, type DataSourceOptions } from 'typeorm';
import { TypeormNumberFormatStore } from 'nestjs-leaf/storage/typeorm';
import { numberFormatStoreContract } from '@app/leaf/testing/contracts/number-format-store.contract';
import { buildDataSourceOptions } from '../../src/database/data-source.options';
import { createPostgresTestDatabase } from '../support/postgres-database';
import { createTestDatabase } from '../support/test-database';
import { describeWithServices } from '../support/services';

jest.setTimeout(30_000);

describeWithServices(['mysql'], 'NumberFormatStore contract on MariaDB', () => {
  numberFormatStoreContract('TypeormNumberFormatStore (mysql)', async () => {
    const db = await createTestDatabase();
    const dataSource = await db.openDataSource({ migrate: true });
    return {
      store: new TypeormNumberFormatStore(dataSource),
      close: async () => {
        await dataSource.destroy();
        await db.drop();
      },
    };
  });
});

describeWithServices(['postgres'], 'NumberFormatStore contract on PostgreSQL', () => {
  numberFormatStoreContract('TypeormNumberFormatStore (postgres)', async () => {
    const db = await createPostgresTestDatabase();
    const dataSource = await db.openDataSource({ migrate: true });
    return {
      store: new TypeormNumberFormatStore(dataSource),
      close: async () => {
        await dataSource.destroy();
        await db.drop();
      },
    };
  });
});

numberFormatStoreContract('TypeormNumberFormatStore (better-sqlite3)', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'leaf-contract-sqlite-'));
  const options = buildDataSourceOptions({ type: 'sqlite', path: join(dir, 'leaf.sqlite') });
  const dataSource = new DataSource(options as DataSourceOptions);
  await dataSource.initialize();
  await dataSource.runMigrations();
  return {
    store: new TypeormNumberFormatStore(dataSource),
    close: async () => {
      await dataSource.destroy();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});
