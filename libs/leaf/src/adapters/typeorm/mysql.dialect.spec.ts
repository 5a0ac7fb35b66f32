import { MYSQL_DIALECT } from './mysql.dialect';

/** A TypeORM QueryFailedError around mysql2's error `errno`. */
function failed(errno: number): Error {
  return Object.assign(new Error('query failed'), {
    name: 'QueryFailedError',
    driverError: { errno, code: 'ER_X' },
  });
}

describe('MySQL/MariaDB errors', () => {
  it('tells a lock wait timeout and a deadlock from a duplicate key and anything else', () => {
    expect(MYSQL_DIALECT.isLockError(failed(1205))).toBe(true);
    expect(MYSQL_DIALECT.isLockError(failed(1213))).toBe(true);
    expect(MYSQL_DIALECT.isLockError(failed(1062))).toBe(false);
    expect(MYSQL_DIALECT.isLockError(new Error('1205'))).toBe(false);
    expect(MYSQL_DIALECT.isDuplicate(failed(1062))).toBe(true);
    expect(MYSQL_DIALECT.isDuplicate(failed(1205))).toBe(false);
  });

  it('finds the errno where an in-transaction caller’s ORM put it', () => {
    // Prisma 7 with the MariaDB adapter: P2010 whose adapter error carries the errno.
    const prisma = Object.assign(new Error('Raw query failed'), {
      code: 'P2010',
      meta: { driverAdapterError: { cause: { originalCode: '1205', code: 1205, kind: 'mysql' } } },
    });
    // Drizzle's DrizzleQueryError: mysql2's error as `cause`.
    const drizzle = new Error('Failed query', { cause: { errno: 1213 } });
    expect(MYSQL_DIALECT.isLockError(prisma)).toBe(true);
    expect(MYSQL_DIALECT.isLockError(drizzle)).toBe(true);
    expect(MYSQL_DIALECT.isLockError({ code: 'P2010' })).toBe(false);
    expect(MYSQL_DIALECT.isDuplicate(new Error('x', { cause: { errno: 1062 } }))).toBe(true);
  });
});
