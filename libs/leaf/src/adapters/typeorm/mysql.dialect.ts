import type { DataSource } from 'typeorm';
import { driverCodesOf } from './allocation-error.mapper';
import type { LockingTransactions, RunSql, SqlDialect } from './sql-dialect';
import {
  DETECT_SESSION_BOUND_SQL,
  checkSessionLimits,
  sessionBoundOf,
  sessionBoundSql,
  type SessionBound,
  type SessionLimits,
} from './session-bound';

/** MySQL/MariaDB error numbers that mean "the row lock could not be taken". */
const LOCK_ERRNOS = new Set([1205 /* ER_LOCK_WAIT_TIMEOUT */, 1213 /* ER_LOCK_DEADLOCK */]);

/** The error numbers `error` carries (mysql2's `errno`, or an ORM's `code`, as a number or digits). */
function errnosOf(error: unknown): number[] {
  return driverCodesOf(error)
    .filter((code) => typeof code === 'number' || /^\d+$/.test(code))
    .map(Number);
}

/**
 * MySQL and MariaDB (TypeORM's `mysql`/`mariadb` drivers over mysql2): the statements as
 * written, `SELECT … FOR UPDATE` / `LOCK IN SHARE MODE`, and each row-locking transaction's
 * session bounded around it (`session-bound.ts`). The hand-back sets `@leaf_hand_back_from`
 * for the trigger of `GuardLeafAllocMaxId`.
 */
export const MYSQL_DIALECT: SqlDialect = {
  kind: 'mysql',
  name: 'MySQL/MariaDB',
  defaultPort: 3306,
  coordination: true,
  sql: (text) => text,
  executor: <T>(db: T) => db,
  isLockError: (error) => errnosOf(error).some((errno) => LOCK_ERRNOS.has(errno)),
  isDuplicate: (error) => errnosOf(error).includes(1062 /* ER_DUP_ENTRY */),
  forUpdate: ' FOR UPDATE',
  forShare: ' LOCK IN SHARE MODE',
  // From UTC_TIMESTAMP, independent of the session's time zone (and of its daylight-saving hour).
  nowMs: "(TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', UTC_TIMESTAMP(6)) DIV 1000)",
  bigint: 'SIGNED',
  nameLock: null,
  // The session's innodb_lock_wait_timeout, in whole seconds (rounded up), then put back.
  boundLockWait: async (run: RunSql, waitMs: number) => {
    await run(
      `SET @leaf_lock_wait = @@SESSION.innodb_lock_wait_timeout, SESSION innodb_lock_wait_timeout = ${Math.max(1, Math.ceil(waitMs / 1000))}`,
    );
    return async () => {
      await run('SET SESSION innodb_lock_wait_timeout = @leaf_lock_wait');
    };
  },
  boundedTransaction: null,
  insertIgnoring: (into) => `INSERT IGNORE ${into}`,
  handBackMark: {
    // A literal, not a bound string: the trigger compares it with the BIGINT exactly.
    set: (expectedMaxId) => [`SET @leaf_hand_back_from = ${expectedMaxId.toString()}`, []],
    clear: 'SET @leaf_hand_back_from = NULL',
  },
  lockingTransactions: mysqlTransactions,
};

/**
 * READ COMMITTED transactions on one pooled connection each, whose session is bounded for
 * their duration (`session-bound.ts`): the limits are set before `START TRANSACTION` and the
 * session's own values put back after `COMMIT` or `ROLLBACK`, so every pause while a row is
 * locked, up to the `COMMIT`, is covered. The server's {@link SessionBound} is asked on the
 * first transaction's connection and kept.
 */
function mysqlTransactions(
  dataSource: DataSource,
  limits: SessionLimits,
  owner: string,
): LockingTransactions {
  checkSessionLimits(limits, owner);
  let bound: SessionBound | null = null;
  return async (work) => {
    const runner = dataSource.createQueryRunner();
    try {
      bound ??= sessionBoundOf(await runner.query(DETECT_SESSION_BOUND_SQL));
      const { set, restore } = sessionBoundSql(bound, limits);
      await runner.query(set);
      try {
        await runner.startTransaction('READ COMMITTED');
        try {
          const result = await work(runner);
          await runner.commitTransaction();
          return result;
        } catch (error) {
          // The original failure (a lock timeout, say) is what the caller must see.
          if (runner.isTransactionActive) await runner.rollbackTransaction().catch(() => undefined);
          throw error;
        }
      } finally {
        // After a COMMIT that succeeded the work is done whatever happens here. A session
        // that cannot be put back (its connection dropped, most likely) must not return to
        // the pool with our limits: it is closed instead.
        await runner.query(restore).catch(() => {
          const held = runner as { databaseConnection?: { destroy?: () => void } };
          held.databaseConnection?.destroy?.();
        });
      }
    } finally {
      await runner.release();
    }
  };
}
