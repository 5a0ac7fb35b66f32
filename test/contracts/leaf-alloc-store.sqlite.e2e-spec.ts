/**
 * The LeafAllocStore contract on SqliteLeafAllocStore (a real better-sqlite3 file, schema from
 * the migrations), with and without LeafAllocEntity in the DataSource's `entities`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataSource, type DataSourceOptions } from 'typeorm';
import { LeafAllocEntity, SqliteLeafAllocStore } from 'nestjs-leaf/storage/typeorm';
import { leafAllocStoreContract } from '@app/leaf/testing/contracts/leaf-alloc-store.contract';
import { buildDataSourceOptions } from '../../src/database/data-source.options';
import { sqlLeafAllocHarness } from '../support/leaf-alloc-harness';

async function openSqlite(entityListed: boolean) {
  const dir = mkdtempSync(join(tmpdir(), 'leaf-contract-sqlite-'));
  const options = buildDataSourceOptions({ type: 'sqlite', path: join(dir, 'leaf.sqlite') });
  const dataSource = new DataSource({
    ...options,
    ...(entityListed ? {} : { entities: [] }),
  } as DataSourceOptions);
  await dataSource.initialize();
  await dataSource.runMigrations();
  // The run must be what its name says.
  expect(dataSource.hasMetadata(LeafAllocEntity)).toBe(entityListed);
  return sqlLeafAllocHarness(dataSource, new SqliteLeafAllocStore(dataSource), async () => {
    await dataSource.destroy();
    rmSync(dir, { recursive: true, force: true });
  });
}

leafAllocStoreContract('SqliteLeafAllocStore, LeafAllocEntity listed in entities', () =>
  openSqlite(true),
);
leafAllocStoreContract('SqliteLeafAllocStore, LeafAllocEntity not listed', () => openSqlite(false));
