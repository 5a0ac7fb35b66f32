import type { DataSource, QueryRunner } from 'typeorm';
import type { SqlExecutor, StructuredSqlExecutor } from './leaf-alloc.sql';
import { MYSQL_DIALECT } from './mysql.dialect';
import { POSTGRES_DIALECT } from './postgres.dialect';
import type { SessionLimits } from './session-bound';
import { SQLITE_DIALECT } from './sqlite.dialect';

/** Runs one statement (in MySQL's form, translated) and answers its rows. */
export type RunSql = (sql: string, parameters?: unknown[]) => Promise<Record<string, unknown>[]>;

/** SQL on one connection: a QueryRunner, or a dialect's translation of one. */
export type ConnectionSql = SqlExecutor & StructuredSqlExecutor;

/** Anything whose `query` may take TypeORM's structured-result flag: a QueryRunner. */
export interface Runner {
  query(sql: string, parameters?: unknown[], useStructuredResult?: boolean): Promise<unknown>;
}

/**
 * Runs `work` in one row-locking transaction on one pooled connection, commits its result and
 * rolls back on any failure (the failure is what the caller sees). A connection left in an
 * unknown state is closed, never returned to the pool.
 */
export type LockingTransactions = <T>(work: (sql: ConnectionSql) => Promise<T>) => Promise<T>;

/**
 * What the TypeORM stores need to know about one database: the statements are written once,
 * in MySQL's form (`?` placeholders, `CAST(… AS CHAR)` for text), and each dialect says how its
 * driver takes them, what its errors mean and how it locks. {@link dialectOf} picks one from a
 * DataSource's driver; no store asks for the driver itself.
 */
export interface SqlDialect {
  /** The family, as messages and the stores' public names tell it. */
  readonly kind: 'mysql' | 'postgres' | 'sqlite';
  /** The database's name in messages and descriptions. */
  readonly name: 'MySQL/MariaDB' | 'PostgreSQL' | 'SQLite';
  /** The server's port when a DataSource names none (null: no server). */
  readonly defaultPort: number | null;
  /**
   * Whether the database serves several processes: the database-held coordination runs on it
   * (the sequence election, worker-ID leases, the high-water mark), and a write outside a
   * row-locking transaction (a new tag, a hand-back without a mark) runs as one autocommit
   * statement. False for SQLite, which serves one process on its single serialised connection:
   * every write goes through {@link SqlDialect.lockingTransactions}.
   */
  readonly coordination: boolean;
  /** A statement in MySQL's form as this driver takes it. */
  sql(text: string): string;
  /** `db` with every statement passed through {@link SqlDialect.sql}. */
  executor(db: Runner): ConnectionSql;
  executor(db: SqlExecutor): SqlExecutor;
  /**
   * True when the error means "the lock could not be taken": a lock wait timeout, a deadlock,
   * or (PostgreSQL, 40001) a serialization failure — each a race lost, so a claim retries it.
   */
  isLockError(error: unknown): boolean;
  /** True for a duplicate-key error. */
  isDuplicate(error: unknown): boolean;
  /**
   * The clause that locks the rows a `SELECT` reads until the transaction ends (with its
   * leading space); empty where the transaction already holds the database's write lock.
   */
  readonly forUpdate: string;
  /** The clause that share-locks the rows a `SELECT` reads (with its leading space). */
  readonly forShare: string;
  /** Now on the database's clock in epoch milliseconds, as an SQL expression. */
  readonly nowMs: string;
  /** The type a bound value is cast to for a 64-bit integer comparison. */
  readonly bigint: string;
  /**
   * A transaction-scoped lock on a name, taken with the name bound (`?`), for a database whose
   * row locks take no gaps (two transactions could otherwise both insert one new row); null
   * where the row locks do.
   */
  readonly nameLock: string | null;
  /**
   * `INSERT ${into}` that inserts nothing where the row's key (`conflict`, the key's columns)
   * exists already.
   */
  insertIgnoring(into: string, conflict?: string): string;
  /**
   * The guarded hand-back's mark for the trigger of `GuardLeafAllocMaxId`, set before the
   * `UPDATE` on its connection and cleared after it; a mark without `clear` ends with the
   * transaction, so the hand-back runs in one. Null without the trigger.
   */
  readonly handBackMark: {
    set(expectedMaxId: bigint): [sql: string, parameters: unknown[]];
    clear: string | null;
  } | null;
  /**
   * Bounds the wait of the next lock taken on `run`'s connection to `waitMs` inside a
   * transaction that may be a caller's; the returned function puts the caller's bound back
   * (`failed`: the locking statement failed). With `idleMs` (> 0), where the database has a
   * transaction-local bound on idleness (PostgreSQL's `idle_in_transaction_session_timeout`,
   * lowered, never raised), the transaction may then sit idle that long at most before the
   * server ends its session and so releases the lock; MySQL/MariaDB have none (a session
   * setting would outlive a caller's transaction). Null where no bound exists (SQLite).
   */
  readonly boundLockWait:
    | ((
        run: RunSql,
        waitMs: number,
        idleMs?: number,
      ) => Promise<(failed: boolean) => Promise<void>>)
    | null;
  /**
   * A READ COMMITTED transaction of the store's own run as simple queries: `begin` starts it
   * with its lock waits bounded to `waitMs` (and, `idleMs` > 0, its idleness as
   * {@link boundLockWait} says), in one round trip, for as long as the transaction lasts;
   * `inline` writes a statement in MySQL's form with its values in as literals, to be sent
   * with the `COMMIT` (a simple query takes no parameters). Null where the bound must be set
   * around each lock instead ({@link boundLockWait}: MySQL/MariaDB's is a session setting).
   */
  readonly boundedTransaction: {
    begin(waitMs: number, idleMs: number): string;
    inline(sql: string, values: readonly unknown[]): string;
  } | null;
  /**
   * The row-locking transactions of one store on `dataSource`, bounded by `limits`.
   * @throws {LeafConfigurationError} when a limit is out of the server's range (`owner`
   *   names the store in the message).
   */
  lockingTransactions(
    dataSource: DataSource,
    limits: SessionLimits,
    owner: string,
  ): LockingTransactions;
}

/**
 * The dialect of a DataSource's driver (`mysql`/`mariadb`, `postgres`, `better-sqlite3`), or
 * undefined for any other: each caller says in its own words what it supports.
 */
export function dialectOf(dataSource: DataSource | undefined): SqlDialect | undefined {
  switch (dataSource?.options?.type) {
    case 'mysql':
    case 'mariadb':
      return MYSQL_DIALECT;
    case 'postgres':
      return POSTGRES_DIALECT;
    case 'better-sqlite3':
      return SQLITE_DIALECT;
    default:
      return undefined;
  }
}

/** Runs `work` on one pooled connection, returned to the pool after it. */
export async function withConnection<T>(
  dataSource: DataSource,
  work: (runner: QueryRunner) => Promise<T>,
): Promise<T> {
  const runner = dataSource.createQueryRunner();
  try {
    return await work(runner);
  } finally {
    await runner.release();
  }
}

/** Runs one statement in autocommit on a pooled connection; true when it changed one row. */
export function changesOneRow(
  dataSource: DataSource,
  sql: string,
  parameters: unknown[],
): Promise<boolean> {
  return withConnection(dataSource, async (runner) => {
    const result = (await runner.query(sql, parameters, true)) as { affected?: number };
    return result.affected === 1;
  });
}
