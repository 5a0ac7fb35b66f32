import type { DataSource, QueryRunner } from 'typeorm';
import { ConcurrencyLimiter } from '../../core/concurrency-limiter';
import type {
  AllocatedRange,
  LeafAllocRow,
  LeafAllocStore,
  IssuerFence,
  NewTag,
  RangeGrant,
  RangeJournalEntry,
  TagUpdate,
} from '../../core/segment/leaf-alloc-store.port';
import { toAllocationError } from './allocation-error.mapper';
import { handBackRow } from './leaf-alloc.sql';
import {
  advanceRow,
  insertRow,
  selectGrant,
  selectRow,
  selectRows,
  selectTags,
  updateRow,
  type SqlExecutor,
} from './leaf-alloc.sql';

/** SQLite reports contention as SQLITE_BUSY / SQLITE_LOCKED. */
function isSqliteLockError(error: unknown): boolean {
  const text =
    error instanceof Error ? `${error.message} ${String((error as { code?: unknown }).code)}` : '';
  return /SQLITE_BUSY|SQLITE_LOCKED|database is locked/i.test(text);
}

/** A primary-key violation: SQLITE_CONSTRAINT_PRIMARYKEY / "UNIQUE constraint failed". */
function isSqliteDuplicate(error: unknown): boolean {
  const text =
    error instanceof Error ? `${error.message} ${String((error as { code?: unknown }).code)}` : '';
  return /SQLITE_CONSTRAINT_PRIMARYKEY|SQLITE_CONSTRAINT_UNIQUE|UNIQUE constraint failed/i.test(
    text,
  );
}

/**
 * Range allocation on the embedded SQLite database (TypeORM `better-sqlite3` driver).
 *
 * SQLite has no `SELECT … FOR UPDATE`; its own serialised write transaction (`BEGIN
 * IMMEDIATE` takes the database's write lock up front) plays that role across processes,
 * and an in-process queue keeps this process's allocations from interleaving on the
 * single connection. The statements and the allocation rule are the MySQL store's
 * (`leaf-alloc.sql.ts`: plain SQL on `leaf_alloc`, so the DataSource need not list
 * `LeafAllocEntity`); `max_id` is read as text because SQLite's driver would round integers
 * above 2^53 through a JavaScript number.
 */
export class SqliteLeafAllocStore implements LeafAllocStore {
  private readonly queue = new ConcurrencyLimiter(1);
  private readonly lockWaitMs: number;

  constructor(
    private readonly dataSource: DataSource,
    options: { lockWaitTimeoutMs?: number } = {},
  ) {
    this.lockWaitMs = options.lockWaitTimeoutMs ?? 5000;
  }

  listTags(): Promise<string[]> {
    return this.read(selectTags);
  }

  listAll(): Promise<LeafAllocRow[]> {
    return this.read(selectRows);
  }

  findTag(tag: string): Promise<LeafAllocRow | null> {
    return this.read((db) => selectRow(db, tag));
  }

  createTag(tag: NewTag): Promise<LeafAllocRow> {
    return this.queue.run(() =>
      this.writeSerialised(String(tag.tag), (db) => insertRow(db, tag, isSqliteDuplicate)),
    );
  }

  updateTag(tag: string, update: TagUpdate): Promise<LeafAllocRow> {
    return this.queue.run(() => this.writeSerialised(tag, (db) => updateRow(db, tag, update)));
  }

  private async read<T>(statement: (db: SqlExecutor) => Promise<T>): Promise<T> {
    try {
      return await statement(this.dataSource);
    } catch (error) {
      throw toAllocationError('*', error, isSqliteLockError);
    }
  }

  /** `_fence` is not checked: the database-held election does not run on SQLite. */
  allocate(
    tag: string,
    step?: number,
    _fence?: IssuerFence,
    journal?: RangeJournalEntry,
  ): Promise<AllocatedRange> {
    return this.queue.run(() => this.allocateSerialised(tag, step, journal ?? null));
  }

  grantOf(tag: string, id: bigint): Promise<RangeGrant | null> {
    return this.read((db) => selectGrant(db, tag, id));
  }

  /**
   * One guarded `UPDATE` through the in-process queue (so it never lands inside another
   * caller's open transaction on the single connection), in its own `BEGIN IMMEDIATE`
   * transaction (so a write lock held by another process is waited for on a timer).
   */
  handBack(tag: string, expectedMaxId: bigint, newMaxId: bigint): Promise<boolean> {
    return this.queue.run(async () => {
      const runner = this.dataSource.createQueryRunner();
      let open = false;
      try {
        await this.beginImmediate(runner);
        open = true;
        const lowered = await handBackRow(runner, tag, expectedMaxId, newMaxId);
        await runner.query('COMMIT');
        open = false;
        return lowered;
      } catch (error) {
        if (open) await runner.query('ROLLBACK').catch(() => undefined);
        throw toAllocationError(tag, error, isSqliteLockError);
      } finally {
        await runner.release();
      }
    });
  }

  private allocateSerialised(
    tag: string,
    step: number | undefined,
    journal: RangeJournalEntry | null,
  ): Promise<AllocatedRange> {
    return this.writeSerialised(tag, (runner) =>
      advanceRow(runner, tag, step, { lockRow: false, journal }),
    );
  }

  /**
   * Runs `body` in one `BEGIN IMMEDIATE` write transaction (the caller holds the queue):
   * commits its result, rolls back on any failure.
   */
  private async writeSerialised<T>(tag: string, body: (db: SqlExecutor) => Promise<T>): Promise<T> {
    const runner = this.dataSource.createQueryRunner();
    let open = false;
    try {
      await this.beginImmediate(runner);
      open = true;
      const result = await body(runner);
      await runner.query('COMMIT');
      open = false;
      return result;
    } catch (error) {
      if (open) await runner.query('ROLLBACK').catch(() => undefined);
      throw toAllocationError(tag, error, isSqliteLockError);
    } finally {
      await runner.release();
    }
  }

  /**
   * Takes the database's write lock. better-sqlite3 is synchronous, so SQLite's own
   * `busy_timeout` would freeze the event loop while another connection (another process,
   * or another DataSource on the same file) holds the lock: fail fast instead and retry on a
   * timer, up to `lockWaitTimeoutMs`.
   */
  private async beginImmediate(runner: QueryRunner): Promise<void> {
    const deadline = Date.now() + this.lockWaitMs;
    for (let pause = 5; ; pause = Math.min(pause * 2, 200)) {
      try {
        await runner.query('BEGIN IMMEDIATE');
        return;
      } catch (error) {
        if (!isSqliteLockError(error) || Date.now() + pause > deadline) throw error;
        await new Promise((resolve) => setTimeout(resolve, pause));
      }
    }
  }
}
