import type { DataSource, QueryRunner } from 'typeorm';
import { ConcurrencyLimiter } from '../../core/concurrency-limiter';
import { POSTGRES_DIALECT } from './postgres.dialect';
import type { SessionLimits } from './session-bound';
import type { LockingTransactions, SqlDialect } from './sql-dialect';

/** The error's message and driver code, as SQLite's errors are recognised. */
function textOf(error: unknown): string {
  return error instanceof Error
    ? `${error.message} ${String((error as { code?: unknown }).code)}`
    : '';
}

/** SQLite reports contention as SQLITE_BUSY / SQLITE_LOCKED. */
function isSqliteLockError(error: unknown): boolean {
  return /SQLITE_BUSY|SQLITE_LOCKED|database is locked/i.test(textOf(error));
}

/**
 * The embedded SQLite database (TypeORM's `better-sqlite3` driver), serving one process. SQLite
 * has no `SELECT … FOR UPDATE`; its own serialised write transaction (`BEGIN IMMEDIATE` takes
 * the database's write lock up front) plays that role across processes, and an in-process
 * queue keeps this process's writes from interleaving on the single connection: every write
 * runs in such a transaction. The statements are MySQL's (`?` placeholders, `CAST(… AS CHAR)`
 * is text); no trigger guards a hand-back (one process owns the file).
 */
export const SQLITE_DIALECT: SqlDialect = {
  kind: 'sqlite',
  name: 'SQLite',
  defaultPort: null,
  coordination: false,
  sql: (text) => text,
  executor: <T>(db: T) => db,
  isLockError: isSqliteLockError,
  // A primary-key violation: SQLITE_CONSTRAINT_PRIMARYKEY / "UNIQUE constraint failed".
  isDuplicate: (error) =>
    /SQLITE_CONSTRAINT_PRIMARYKEY|SQLITE_CONSTRAINT_UNIQUE|UNIQUE constraint failed/i.test(
      textOf(error),
    ),
  forUpdate: '',
  forShare: '',
  // One process: its clock is the host's.
  nowMs: "CAST(ROUND((julianday('now') - 2440587.5) * 86400000) AS INTEGER)",
  bigint: 'INTEGER',
  nameLock: null,
  boundLockWait: null,
  boundedTransaction: null,
  insertIgnoring: POSTGRES_DIALECT.insertIgnoring,
  handBackMark: null,
  lockingTransactions: sqliteTransactions,
};

/**
 * `BEGIN IMMEDIATE` write transactions, one at a time in this process (the queue: they share
 * the single connection), each waiting up to `lockWaitTimeoutSec` for a write lock another
 * connection holds. `idleTimeoutSec` does not apply: no other process waits on a dead holder's
 * session.
 */
function sqliteTransactions(dataSource: DataSource, limits: SessionLimits): LockingTransactions {
  const queue = new ConcurrencyLimiter(1);
  const lockWaitMs = limits.lockWaitTimeoutSec * 1000;
  return (work) =>
    queue.run(async () => {
      const runner = dataSource.createQueryRunner();
      let open = false;
      try {
        await beginImmediate(runner, lockWaitMs);
        open = true;
        const result = await work(runner);
        await runner.query('COMMIT');
        open = false;
        return result;
      } catch (error) {
        if (open) await runner.query('ROLLBACK').catch(() => undefined);
        throw error;
      } finally {
        await runner.release();
      }
    });
}

/**
 * Takes the database's write lock. better-sqlite3 is synchronous, so SQLite's own
 * `busy_timeout` would freeze the event loop while another connection (another process, or
 * another DataSource on the same file) holds the lock: fail fast instead and retry on a
 * timer, up to `lockWaitMs`.
 */
async function beginImmediate(runner: QueryRunner, lockWaitMs: number): Promise<void> {
  const deadline = Date.now() + lockWaitMs;
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
