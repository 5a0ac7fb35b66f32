/**
 * The embedded SQLite store on a real better-sqlite3 file: its serialised write
 * transaction under contention from another connection, without blocking the event loop;
 * typed errors for an unreadable table; and the migration refusing to drop allocated ranges.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { DataSource } from 'typeorm';
import { LeafErrorCode } from 'nestjs-leaf';
import { AllocationError, AllocationLockTimeoutError } from 'nestjs-leaf/errors';
import { SqliteLeafAllocStore } from 'nestjs-leaf/storage/typeorm';
import { buildDataSourceOptions } from '../src/database/data-source.options';

describe('SqliteLeafAllocStore on a real file', () => {
  let dir: string;
  let file: string;
  let dataSource: DataSource;

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'leaf-sqlite-'));
    file = join(dir, 'leaf.sqlite');
    dataSource = new DataSource(buildDataSourceOptions({ type: 'sqlite', path: file }));
    await dataSource.initialize();
    await dataSource.runMigrations();
  });

  afterEach(async () => {
    if (dataSource.isInitialized) await dataSource.destroy();
    rmSync(dir, { recursive: true, force: true });
  });

  it('waits for a write lock held by another connection on a timer, not by blocking the event loop', async () => {
    const store = new SqliteLeafAllocStore(dataSource, { lockWaitTimeoutMs: 3000 });
    const other = new Database(file);
    other.exec('BEGIN IMMEDIATE');
    other.exec("UPDATE leaf_alloc SET max_id = max_id + 100 WHERE biz_tag = 'leaf-segment-test'");
    let ticks = 0;
    const ticker = setInterval(() => ticks++, 10);
    try {
      const pending = store.allocate('leaf-segment-test');
      await new Promise((resolve) => setTimeout(resolve, 300));
      other.exec('COMMIT');
      const range = await pending;
      // The other connection's range [1, 101) came first; ours follows it.
      expect(range).toMatchObject({ maxId: 2101n, appliedStep: 2000 });
      // A 10 ms timer over the 300 ms wait: 30 ticks on an idle machine, 13 seen under a full
      // CI run. A wait that blocked the event loop would let it fire at most once.
      expect(ticks).toBeGreaterThanOrEqual(5);
    } finally {
      clearInterval(ticker);
      other.close();
    }
  });

  it('gives up with AllocationLockTimeoutError after lockWaitTimeoutMs and works again once the lock is gone', async () => {
    const store = new SqliteLeafAllocStore(dataSource, { lockWaitTimeoutMs: 200 });
    const other = new Database(file);
    other.exec('BEGIN IMMEDIATE');
    try {
      const error = await store.allocate('leaf-segment-test').catch((e: unknown) => e);
      expect(error).toBeInstanceOf(AllocationLockTimeoutError);
      expect((error as AllocationLockTimeoutError).code).toBe(
        LeafErrorCode.ALLOCATION_LOCK_TIMEOUT,
      );
    } finally {
      other.exec('ROLLBACK');
      other.close();
    }
    await expect(store.allocate('leaf-segment-test')).resolves.toMatchObject({ maxId: 2001n });
  });

  it('reports an unreadable table as a typed AllocationError (503), not a raw driver error', async () => {
    const store = new SqliteLeafAllocStore(dataSource);
    await dataSource.query('DROP TABLE leaf_alloc');
    await expect(store.listTags()).rejects.toBeInstanceOf(AllocationError);
    await expect(store.listAll()).rejects.toBeInstanceOf(AllocationError);
  });

  it('refuses to revert the migration once ranges were allocated, and allows it on an untouched table', async () => {
    // The app's set (migrations/): the library's table, its trigger (nothing on SQLite), its
    // residue-class columns, the issuer, lease and number-format tables, the ID journal, the
    // gapless series' tables, then the demo-tag seed, undone first.
    for (let i = 0; i < 9; i++) {
      await expect(dataSource.undoLastMigration()).resolves.toBeUndefined();
    }
    expect(
      await dataSource.query("SELECT name FROM sqlite_master WHERE name = 'leaf_alloc'"),
    ).toEqual([]);
    await dataSource.runMigrations();
    await new SqliteLeafAllocStore(dataSource).allocate('leaf-segment-test');
    // The seed's revert keeps a demo tag that handed out IDs; the table's refuses.
    for (let i = 0; i < 8; i++) {
      await expect(dataSource.undoLastMigration()).resolves.toBeUndefined();
    }
    await expect(dataSource.undoLastMigration()).rejects.toThrow(/Refusing to drop leaf_alloc/);
    const [row] = (await dataSource.query(
      'SELECT CAST(max_id AS TEXT) AS max_id FROM leaf_alloc',
    )) as Array<{ max_id: string }>;
    expect(row.max_id).toBe('2001');
  });
});
