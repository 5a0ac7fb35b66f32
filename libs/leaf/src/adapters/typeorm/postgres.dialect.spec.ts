import { QueryFailedError, type DataSource } from 'typeorm';
import { LeafConfigurationError } from '../../core/errors/leaf-configuration.error';
import {
  inlinePostgresSql,
  postgresBeginSql,
  postgresLiteral,
  POSTGRES_DIALECT,
  postgresSql,
  toPostgresSql,
} from './postgres.dialect';
import type { SessionLimits } from './session-bound';

const failed = (code: string) =>
  new QueryFailedError('UPDATE', [], Object.assign(new Error('x'), { code }));

describe('toPostgresSql', () => {
  it('numbers the placeholders and reads max_id as text, not as one CHAR', () => {
    expect(
      toPostgresSql(
        'SELECT CAST(max_id AS CHAR) AS max_id, step FROM leaf_alloc WHERE biz_tag = ? AND step = ?',
      ),
    ).toBe(
      'SELECT CAST(max_id AS text) AS max_id, step FROM leaf_alloc WHERE biz_tag = $1 AND step = $2',
    );
    expect(toPostgresSql('SELECT biz_tag AS tag FROM leaf_alloc')).toBe(
      'SELECT biz_tag AS tag FROM leaf_alloc',
    );
  });

  it('postgresSql passes the translated statement and only the arguments given', async () => {
    const calls: unknown[][] = [];
    const db = {
      query: (...args: unknown[]) => {
        calls.push(args);
        return Promise.resolve([]);
      },
    };
    await postgresSql(db).query('SELECT ? AS a', [1]);
    await postgresSql(db).query('UPDATE t SET a = ?', [2], true);
    expect(calls).toEqual([
      ['SELECT $1 AS a', [1]],
      ['UPDATE t SET a = $1', [2], true],
    ]);
  });
});

describe('postgresLiteral and inlinePostgresSql', () => {
  it('escapes quotes and backslashes in an E-string, nothing else', () => {
    expect(postgresLiteral(`it's a \\ "x" ?`)).toBe(`E'it''s a \\\\ "x" ?'`);
    expect(postgresLiteral('')).toBe("E''");
  });

  it('inlinePostgresSql writes strings, integers and null in, and refuses anything else', () => {
    expect(
      inlinePostgresSql('UPDATE t SET a = ?, b = ? WHERE c = ? AND d = ?', ["x'y", 12n, 3, null]),
    ).toBe("UPDATE t SET a = E'x''y', b = 12 WHERE c = 3 AND d = NULL");
    expect(() => inlinePostgresSql('SELECT ?', [1.5])).toThrow(TypeError);
    expect(() => inlinePostgresSql('SELECT ?', [{}])).toThrow(TypeError);
    expect(() => inlinePostgresSql('SELECT ?, ?', ['a'])).toThrow(TypeError);
  });
});

describe('PostgreSQL errors', () => {
  it('tells a lock timeout and a deadlock from a duplicate key and anything else', () => {
    expect(POSTGRES_DIALECT.isLockError(failed('55P03'))).toBe(true);
    expect(POSTGRES_DIALECT.isLockError(failed('40P01'))).toBe(true);
    expect(POSTGRES_DIALECT.isLockError(failed('23505'))).toBe(false);
    expect(POSTGRES_DIALECT.isLockError(new Error('55P03'))).toBe(false);
    expect(POSTGRES_DIALECT.isDuplicate(failed('23505'))).toBe(true);
    expect(POSTGRES_DIALECT.isDuplicate(failed('55P03'))).toBe(false);
  });

  it('finds the SQLSTATE where an in-transaction caller’s ORM put it', () => {
    // Prisma 7 with a driver adapter: P2010 whose adapter error carries pg's code.
    const prisma = Object.assign(new Error('Raw query failed'), {
      code: 'P2010',
      meta: { driverAdapterError: { cause: { originalCode: '55P03', kind: 'postgres' } } },
    });
    // Drizzle's DrizzleQueryError: pg's error as `cause`.
    const drizzle = new Error('Failed query', { cause: { code: '40P01' } });
    expect(POSTGRES_DIALECT.isLockError(prisma)).toBe(true);
    expect(POSTGRES_DIALECT.isLockError(drizzle)).toBe(true);
    expect(POSTGRES_DIALECT.isLockError(failed('40001'))).toBe(true);
    expect(POSTGRES_DIALECT.isLockError({ code: 'P2010', meta: { driverAdapterError: {} } })).toBe(
      false,
    );
    expect(POSTGRES_DIALECT.isDuplicate(new Error('x', { cause: { code: '23505' } }))).toBe(true);
  });
});

describe('the row-locking transaction’s limits', () => {
  it('are set with the transaction, in milliseconds, in one round trip', () => {
    expect(postgresBeginSql(5000, 16000)).toBe(
      'BEGIN ISOLATION LEVEL READ COMMITTED; SET LOCAL lock_timeout = 5000; SET LOCAL idle_in_transaction_session_timeout = 16000',
    );
    expect(postgresBeginSql(1500.7, 0)).toBe(
      'BEGIN ISOLATION LEVEL READ COMMITTED; SET LOCAL lock_timeout = 1500',
    );
  });

  it('refuse what PostgreSQL would not take, naming every problem', () => {
    const transactions = (limits: SessionLimits) =>
      POSTGRES_DIALECT.lockingTransactions({} as DataSource, limits, 'PostgresLeafAllocStore');
    expect(() => transactions({ lockWaitTimeoutSec: 1, idleTimeoutSec: 2_147_483 })).not.toThrow();
    let error: unknown;
    try {
      transactions({ lockWaitTimeoutSec: 0.5, idleTimeoutSec: 2_147_484 });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(LeafConfigurationError);
    expect((error as LeafConfigurationError).problems).toEqual([
      'PostgresLeafAllocStore lockWaitTimeoutSec must be an integer in 1..2147483 (got 0.5)',
      'PostgresLeafAllocStore idleTimeoutSec must be an integer in 1..2147483 (got 2147484)',
    ]);
  });
});
