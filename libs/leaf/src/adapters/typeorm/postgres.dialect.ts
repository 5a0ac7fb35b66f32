import type { DataSource, QueryRunner } from 'typeorm';
import { driverCodesOf } from './allocation-error.mapper';
import type { SqlExecutor, StructuredSqlExecutor } from './leaf-alloc.sql';
import { checkSessionLimits, type SessionLimits } from './session-bound';
import type { LockingTransactions, Runner, RunSql, SqlDialect } from './sql-dialect';

/**
 * SQLSTATEs meaning "the row lock could not be taken": `lock_not_available` (a `lock_timeout`
 * expiry), `deadlock_detected`, and `serialization_failure` (a locked read of a row changed
 * since the snapshot, in a caller's REPEATABLE READ transaction: docs/gapless.md).
 */
const LOCK_STATES = new Set<unknown>(['55P03', '40P01', '40001']);

/**
 * A statement of `leaf-alloc.sql.ts` as PostgreSQL takes it: the `?` placeholders numbered
 * `$1`, `$2`, … and MySQL's text cast `CAST(… AS CHAR)` written `CAST(… AS text)` (PostgreSQL's
 * `CHAR` is one character: `max_id` would arrive cut to its first digit). Those statements
 * hold no other `?` and no string literal: values are bound, or written as checked digits.
 */
export function toPostgresSql(sql: string): string {
  let n = 0;
  return sql.replace(/\?/g, () => `$${++n}`).replace(/ AS CHAR\)/g, ' AS text)');
}

/**
 * `text` as a PostgreSQL escape-string literal (`E'…'`, backslashes and quotes doubled), right
 * whatever `standard_conforming_strings` says: for a simple query, which takes no parameters.
 */
export function postgresLiteral(text: string): string {
  return `E'${text.replace(/\\/g, '\\\\').replace(/'/g, "''")}'`;
}

/**
 * A statement in MySQL's form (its only `?` are placeholders) with `values` written in:
 * strings as {@link postgresLiteral}, integers (bigint, safe numbers) as digits, null as
 * `NULL` — for a simple query, which takes no parameters.
 * @throws {TypeError} for any other value, or a count that does not match the placeholders.
 */
export function inlinePostgresSql(sql: string, values: readonly unknown[]): string {
  const parts = sql.split('?');
  if (parts.length !== values.length + 1)
    throw new TypeError(`${values.length} values for ${parts.length - 1} placeholders`);
  return parts.reduce((text, part, i) => `${text}${literalOf(values[i - 1])}${part}`);
}

function literalOf(value: unknown): string {
  if (value === null) return 'NULL';
  if (typeof value === 'string') return postgresLiteral(value);
  if (typeof value === 'bigint' || (typeof value === 'number' && Number.isSafeInteger(value)))
    return value.toString();
  throw new TypeError(`no literal for a ${typeof value}`);
}

/**
 * `db` with every statement passed through {@link toPostgresSql}, for the functions of
 * `leaf-alloc.sql.ts`; the parameters and the result are the driver's, untouched (pg returns
 * `int8` as a decimal string, and the statements read `max_id` as text anyway).
 */
export function postgresSql(db: Runner): SqlExecutor & StructuredSqlExecutor;
export function postgresSql(db: SqlExecutor): SqlExecutor;
export function postgresSql(db: Runner): SqlExecutor & StructuredSqlExecutor {
  return {
    // Only the arguments given are passed on: a DataSource's third is a QueryRunner.
    query: ((sql: string, ...rest: [unknown[]?, boolean?]) =>
      db.query(toPostgresSql(sql), ...rest)) as SqlExecutor['query'] &
      StructuredSqlExecutor['query'],
  };
}

/** PostgreSQL's largest `lock_timeout` / `idle_in_transaction_session_timeout`, in seconds. */
const MAX_TIMEOUT_SEC = Math.floor(2_147_483_647 / 1000);

/**
 * The start of a READ COMMITTED transaction whose lock waits are bounded to `waitMs` and (with
 * `idleMs` > 0) its idleness to `idleMs`, in one round trip (a simple query: no parameters,
 * checked integers as literals). `SET LOCAL` ends with the transaction, so a pooled session
 * needs nothing put back:
 * - `lock_timeout`: how long a statement waits for the row lock (then SQLSTATE 55P03);
 * - `idle_in_transaction_session_timeout`: how long the session may stay silent inside the
 *   transaction before the server ends it, rolling back and releasing the row — a holder that
 *   died or froze blocks the tag that long, not until TCP gives up (`session-bound.ts`, the
 *   same bound on MySQL/MariaDB). It counts from the server's last answer, so every pause up to
 *   the `COMMIT` is covered. No privilege needed.
 *
 * READ COMMITTED whatever the server's default: under REPEATABLE READ or SERIALIZABLE a
 * locked read of a row changed since the snapshot fails instead of waiting.
 */
export function postgresBeginSql(waitMs: number, idleMs: number): string {
  return `BEGIN ISOLATION LEVEL READ COMMITTED; SET LOCAL lock_timeout = ${Math.trunc(waitMs)}${
    idleMs > 0 ? `; SET LOCAL idle_in_transaction_session_timeout = ${Math.trunc(idleMs)}` : ''
  }`;
}

/**
 * The custom setting the trigger of `GuardLeafAllocMaxId` compares with the row's `max_id`
 * before it lets `max_id` go down (PostgreSQL's `@leaf_hand_back_from`).
 */
export const HAND_BACK_SETTING = 'leaf.hand_back_from';

/**
 * The select-list item of {@link POSTGRES_DIALECT}'s `boundLockWait` that lowers
 * `idle_in_transaction_session_timeout` to `idleMs` for the transaction (a caller's own lower,
 * non-zero bound is kept; `pg_settings.setting` is in ms); empty for 0. A checked integer,
 * written as a literal.
 */
function idleBound(idleMs: number): string {
  if (!Number.isSafeInteger(idleMs) || idleMs <= 0) return '';
  const ms = Math.min(idleMs, MAX_TIMEOUT_SEC * 1000);
  return `, (SELECT set_config('idle_in_transaction_session_timeout', CASE WHEN s.setting::bigint BETWEEN 1 AND ${ms} THEN s.setting ELSE '${ms}' END, true) FROM pg_settings s WHERE s.name = 'idle_in_transaction_session_timeout') AS idle`;
}

/**
 * PostgreSQL (TypeORM's `postgres` driver over pg): the statements translated
 * ({@link toPostgresSql}), SQLSTATEs, row-locking transactions that set their own limits
 * (`SET LOCAL`), the hand-back's mark for the trigger of `GuardLeafAllocMaxId`.
 */
export const POSTGRES_DIALECT: SqlDialect = {
  kind: 'postgres',
  name: 'PostgreSQL',
  defaultPort: 5432,
  coordination: true,
  sql: toPostgresSql,
  executor: postgresSql,
  isLockError: (error) => driverCodesOf(error).some((code) => LOCK_STATES.has(code)),
  isDuplicate: (error) => driverCodesOf(error).includes('23505' /* unique_violation */),
  forUpdate: ' FOR UPDATE',
  forShare: ' FOR SHARE',
  // clock_timestamp(): the statement's own instant, not the transaction's start.
  nowMs: '(EXTRACT(EPOCH FROM clock_timestamp()) * 1000)::bigint',
  bigint: 'bigint',
  nameLock: 'SELECT pg_advisory_xact_lock(hashtext(?))',
  // Transaction-local, to the millisecond, in the same round trip; after a failure the
  // transaction is aborted anyway. The idle bound is left in place until the transaction ends.
  boundLockWait: async (run: RunSql, waitMs: number, idleMs = 0) => {
    const [previous] = await run(
      `SELECT current_setting('lock_timeout') AS previous, set_config('lock_timeout', ?, true) AS now${idleBound(idleMs)}`,
      [`${waitMs}ms`],
    );
    return async (failed) => {
      if (!failed)
        await run("SELECT set_config('lock_timeout', ?, true) AS restored", [previous!.previous]);
    };
  },
  boundedTransaction: { begin: postgresBeginSql, inline: inlinePostgresSql },
  insertIgnoring: (into, conflict) =>
    `INSERT ${into} ON CONFLICT${conflict ? ` (${conflict})` : ''} DO NOTHING`,
  handBackMark: {
    // `is_local`: the mark ends with the transaction, so a hand-back always runs in one.
    set: (expectedMaxId) => [
      `SELECT set_config('${HAND_BACK_SETTING}', ?, true)`,
      [expectedMaxId.toString()],
    ],
    clear: null,
  },
  lockingTransactions: postgresTransactions,
};

/**
 * Row-locking transactions on one pooled connection each, started by {@link postgresBeginSql}.
 * A connection whose `ROLLBACK` fails (dropped, or ended by the server's idle bound) is
 * discarded, never returned to the pool inside a transaction.
 * @throws {LeafConfigurationError} when a limit is not a whole number of seconds PostgreSQL takes.
 */
function postgresTransactions(
  dataSource: DataSource,
  limits: SessionLimits,
  owner: string,
): LockingTransactions {
  const max = { lockWaitTimeoutSec: MAX_TIMEOUT_SEC, idleTimeoutSec: MAX_TIMEOUT_SEC };
  const { lockWaitTimeoutSec, idleTimeoutSec } = checkSessionLimits(limits, owner, max);
  const begin = postgresBeginSql(lockWaitTimeoutSec * 1000, idleTimeoutSec * 1000);
  return async (work) => {
    const runner = dataSource.createQueryRunner();
    let failure: unknown = null;
    try {
      // Before BEGIN's answer the transaction may be open already: the catch rolls back.
      await runner.query(begin);
      const result = await work(postgresSql(runner));
      await runner.query('COMMIT');
      return result;
    } catch (error) {
      // The original failure (a lock timeout, say) is what the caller must see.
      await runner.query('ROLLBACK').catch((rollback: unknown) => (failure = rollback));
      throw error;
    } finally {
      // Back to the pool, or, after a failed ROLLBACK, closed by the pool.
      const postgres = runner as QueryRunner & {
        releasePostgresConnection?: (error?: Error) => Promise<void>;
      };
      if (failure !== null && postgres.releasePostgresConnection) {
        const error = failure instanceof Error ? failure : new Error(String(failure));
        await postgres.releasePostgresConnection(error);
      } else {
        await runner.release();
      }
    }
  };
}
