import type { DataSource } from 'typeorm';
import { LeafConfigurationError } from '../../core/errors/leaf-configuration.error';
import { AllocationError } from '../../core/errors/allocation.error';
import { rejectionOf } from '../../testing/test-helpers';
import { MysqlLeafAllocStore } from './mysql-leaf-alloc.store';
import {
  allocationIdleTimeoutSec,
  checkSessionLimits,
  DETECT_SESSION_BOUND_SQL,
  sessionBoundOf,
  sessionBoundSql,
} from './session-bound';

describe('sessionBoundSql', () => {
  const limits = { idleTimeoutSec: 10, lockWaitTimeoutSec: 5 };

  it('MariaDB: the three idle-transaction timeouts and the lock wait, kept and put back', () => {
    expect(sessionBoundSql('idle-transaction', limits)).toEqual({
      set:
        'SET @leaf_lock_wait = @@SESSION.innodb_lock_wait_timeout, ' +
        '@leaf_idle = @@SESSION.idle_transaction_timeout, ' +
        '@leaf_idle_write = @@SESSION.idle_write_transaction_timeout, ' +
        '@leaf_idle_read = @@SESSION.idle_readonly_transaction_timeout, ' +
        'SESSION innodb_lock_wait_timeout = 5, SESSION idle_transaction_timeout = 10, ' +
        'SESSION idle_write_transaction_timeout = 10, SESSION idle_readonly_transaction_timeout = 10',
      restore:
        'SET SESSION innodb_lock_wait_timeout = @leaf_lock_wait, ' +
        'SESSION idle_transaction_timeout = @leaf_idle, ' +
        'SESSION idle_write_transaction_timeout = @leaf_idle_write, ' +
        'SESSION idle_readonly_transaction_timeout = @leaf_idle_read',
    });
  });

  it('MySQL: wait_timeout and the lock wait, kept and put back', () => {
    expect(sessionBoundSql('wait-timeout', limits)).toEqual({
      set:
        'SET @leaf_lock_wait = @@SESSION.innodb_lock_wait_timeout, @leaf_wait = @@SESSION.wait_timeout, ' +
        'SESSION innodb_lock_wait_timeout = 5, SESSION wait_timeout = 10',
      restore:
        'SET SESSION innodb_lock_wait_timeout = @leaf_lock_wait, SESSION wait_timeout = @leaf_wait',
    });
  });

  it('detects the flavour from SHOW VARIABLES: a row is MariaDB’s idle_transaction_timeout', () => {
    expect(sessionBoundOf([{ Variable_name: 'idle_transaction_timeout', Value: '0' }])).toBe(
      'idle-transaction',
    );
    expect(sessionBoundOf([])).toBe('wait-timeout');
    expect(sessionBoundOf(undefined)).toBe('wait-timeout');
  });

  it('allocationIdleTimeoutSec: 10 s, plus three high-water calls with the mark', () => {
    expect(allocationIdleTimeoutSec(null)).toBe(10);
    expect(allocationIdleTimeoutSec(2000)).toBe(16);
    expect(allocationIdleTimeoutSec(100)).toBe(11);
    expect(allocationIdleTimeoutSec(60_000)).toBe(190);
  });
});

/** A QueryRunner stand-in: records every statement, answers from `answer`. */
class FakeRunner {
  isTransactionActive = false;
  released = false;
  destroyed = false;
  readonly databaseConnection = { destroy: () => (this.destroyed = true) };

  constructor(
    private readonly log: string[],
    private readonly answer: (sql: string) => unknown,
  ) {}

  async query(sql: string): Promise<unknown> {
    this.log.push(sql);
    return this.answer(sql);
  }
  async startTransaction(level: string): Promise<void> {
    this.isTransactionActive = true;
    await this.query(`START TRANSACTION ${level}`);
  }
  async commitTransaction(): Promise<void> {
    await this.query('COMMIT');
    this.isTransactionActive = false;
  }
  async rollbackTransaction(): Promise<void> {
    await this.query('ROLLBACK');
    this.isTransactionActive = false;
  }
  async release(): Promise<void> {
    this.released = true;
  }
}

function fakeDataSource(answer: (sql: string) => unknown) {
  const log: string[] = [];
  const runners: FakeRunner[] = [];
  const dataSource = {
    createQueryRunner: () => {
      const runner = new FakeRunner(log, answer);
      runners.push(runner);
      return runner;
    },
  } as unknown as DataSource;
  return { dataSource, log, runners };
}

/** Answers of a server for one allocation of `tag` at max_id 100, step 10. */
function server(flavour: 'mariadb' | 'mysql', fail: RegExp | null = null) {
  return (sql: string): unknown => {
    if (fail?.test(sql)) throw new Error(`refused: ${sql}`);
    if (sql === DETECT_SESSION_BOUND_SQL)
      return flavour === 'mariadb' ? [{ Variable_name: 'idle_transaction_timeout' }] : [];
    if (sql.startsWith('SELECT CAST(max_id AS CHAR) AS max_id, step FROM leaf_alloc'))
      return [{ max_id: sql.includes('FOR UPDATE') ? '100' : '110', step: 10 }];
    return [];
  };
}

describe('MysqlLeafAllocStore: the session around a row-locking transaction', () => {
  it('MariaDB: detects once, sets the bound before START TRANSACTION, puts it back after COMMIT', async () => {
    const { dataSource, log, runners } = fakeDataSource(server('mariadb'));
    const store = new MysqlLeafAllocStore(dataSource, { idleTimeoutSec: 7, lockWaitTimeoutSec: 3 });
    const { set, restore } = sessionBoundSql('idle-transaction', {
      idleTimeoutSec: 7,
      lockWaitTimeoutSec: 3,
    });

    await store.allocate('t');
    await store.allocate('t');

    const shape = log.map((sql) =>
      sql === set ? 'SET' : sql === restore ? 'RESTORE' : sql.split(' ').slice(0, 2).join(' '),
    );
    const one = [
      'SET',
      'START TRANSACTION',
      'SELECT CAST(max_id',
      'UPDATE leaf_alloc',
      'SELECT CAST(max_id',
      'COMMIT',
      'RESTORE',
    ];
    expect(shape).toEqual(['SHOW SESSION', ...one, ...one]);
    expect(runners.every((runner) => runner.released && !runner.destroyed)).toBe(true);
  });

  it('MySQL: wait_timeout around the transaction', async () => {
    const { dataSource, log } = fakeDataSource(server('mysql'));
    await new MysqlLeafAllocStore(dataSource).updateTag('t', { description: 'x' }).catch(() => {
      /* the fake has no row to read back: only the statements matter */
    });
    const { set, restore } = sessionBoundSql('wait-timeout', {
      idleTimeoutSec: 10,
      lockWaitTimeoutSec: 5,
    });
    expect(log[1]).toBe(set);
    expect(log[2]).toBe('START TRANSACTION READ COMMITTED');
    expect(log.slice(-2)).toEqual(['ROLLBACK', restore]);
  });

  it('a failure inside the transaction: ROLLBACK, then the session put back; the failure is what the caller sees', async () => {
    const { dataSource, log, runners } = fakeDataSource(server('mariadb', /^UPDATE/));
    const error = await rejectionOf(new MysqlLeafAllocStore(dataSource).allocate('t'));
    expect(error).toBeInstanceOf(AllocationError);
    expect(error.message).toMatch(/refused: UPDATE/);
    expect(log.slice(-2)).toEqual([
      'ROLLBACK',
      sessionBoundSql('idle-transaction', { idleTimeoutSec: 10, lockWaitTimeoutSec: 5 }).restore,
    ]);
    expect(runners[0].released).toBe(true);
  });

  it('a session that cannot be put back after COMMIT is closed, not pooled; the range still counts', async () => {
    const { dataSource, runners } = fakeDataSource(server('mariadb', /^SET SESSION/));
    const range = await new MysqlLeafAllocStore(dataSource).allocate('t');
    expect(range.maxId).toBe(110n);
    expect(runners[0].destroyed).toBe(true);
    expect(runners[0].released).toBe(true);
  });

  it('a failed detection is asked again by the next transaction', async () => {
    let down = true;
    const answer = server('mariadb');
    const { dataSource, log } = fakeDataSource((sql) => {
      if (down && sql === DETECT_SESSION_BOUND_SQL) throw new Error('connection lost');
      return answer(sql);
    });
    const store = new MysqlLeafAllocStore(dataSource);
    await rejectionOf(store.allocate('t'));
    down = false;
    await store.allocate('t');
    expect(log.filter((sql) => sql === DETECT_SESSION_BOUND_SQL)).toHaveLength(2);
  });

  it('refuses a timeout that is not a positive integer (they are written into the SQL)', () => {
    const dataSource = {} as DataSource;
    expect(() => new MysqlLeafAllocStore(dataSource, { idleTimeoutSec: 0 })).toThrow(
      LeafConfigurationError,
    );
    expect(() => new MysqlLeafAllocStore(dataSource, { idleTimeoutSec: 1.5 })).toThrow(
      /idleTimeoutSec must be an integer in 1\.\.31536000/,
    );
    expect(() => new MysqlLeafAllocStore(dataSource, { lockWaitTimeoutSec: -1 })).toThrow(
      /lockWaitTimeoutSec/,
    );
    const both = { lockWaitTimeoutSec: 2_000_000_000, idleTimeoutSec: 0 };
    expect(() => checkSessionLimits(both)).toThrow(
      expect.objectContaining({
        problems: [
          'MysqlLeafAllocStore idleTimeoutSec must be an integer in 1..31536000 (got 0)',
          'MysqlLeafAllocStore lockWaitTimeoutSec must be an integer in 1..1073741824 (got 2000000000)',
        ],
      }),
    );
  });
});
