/**
 * A holder of a `leaf_alloc` row lock that falls silent (its process died or froze, its host
 * left the network) on real MariaDB: the server drops its session after the store's
 * `idleTimeoutSec`, which rolls its transaction back and releases the row, and another
 * instance's allocation of the tag goes through instead of waiting for `wait_timeout` (8 h).
 *
 * The holder is the store itself, stopped inside its transaction with the row locked: its
 * high-water read (which runs under the lock) never answers, and from the server's side
 * the session just goes quiet, as that of a SIGSTOPped or vanished process does. Both ways
 * of bounding it are run: MariaDB's idle-transaction timeout (detected), and `wait_timeout`
 * around the transaction, MySQL's (forced: MariaDB honours it the same way).
 */
import type { DataSource, QueryRunner } from 'typeorm';
import { AllocationError } from 'nestjs-leaf/errors';
import { MysqlLeafAllocStore } from 'nestjs-leaf/storage/typeorm';
import type { HighWaterMark, HighWaterStore } from '@app/leaf/core/segment/high-water';
import { DETECT_SESSION_BOUND_SQL } from '@app/leaf/adapters/typeorm/session-bound';
import { eventually } from '@app/leaf/testing/eventually';
import { rangeOf, rejectionOf } from '@app/leaf/testing/test-helpers';
import { describeWithServices } from './support/services';
import { createTestDatabase, type TestDatabase } from './support/test-database';

jest.setTimeout(30_000);

/** The holder's bound in these tests, in seconds (the library's is 10 s, 16 s with the mark). */
const IDLE_SEC = 2;

/** A high-water mark whose reads hang until {@link release}: the holder stops mid-transaction. */
class HangingMarks implements HighWaterStore {
  private resume!: () => void;
  private readonly resumed = new Promise<void>((resolve) => (this.resume = resolve));
  /** Resolves once a read has started, i.e. the row is locked and the session is silent. */
  readonly entered: Promise<void>;
  private enter!: () => void;

  constructor() {
    this.entered = new Promise<void>((resolve) => (this.enter = resolve));
  }

  /** When the first read began: the holder's last statement had just been answered. */
  silentSince = 0;

  async read(): Promise<HighWaterMark | null> {
    this.silentSince ||= Date.now();
    this.enter();
    await this.resumed;
    return null;
  }

  async write(): Promise<boolean> {
    return true;
  }

  release(): void {
    this.resume();
  }
}

/**
 * Records every statement the DataSource's query runners send; with `asMysql`, answers the
 * store's flavour detection as MySQL does (no `idle_transaction_timeout`).
 */
function recordStatements(dataSource: DataSource, { asMysql = false } = {}): string[] {
  const log: string[] = [];
  const create = dataSource.createQueryRunner.bind(dataSource);
  dataSource.createQueryRunner = (...args: Parameters<DataSource['createQueryRunner']>) => {
    const runner: QueryRunner = create(...args);
    const query = runner.query.bind(runner) as (...a: unknown[]) => Promise<unknown>;
    runner.query = ((sql: string, ...rest: unknown[]) => {
      log.push(sql);
      if (asMysql && sql === DETECT_SESSION_BOUND_SQL) return Promise.resolve([]);
      return query(sql, ...rest);
    }) as QueryRunner['query'];
    return runner;
  };
  return log;
}

describeWithServices(['mysql'], 'a silent holder of a leaf_alloc row lock (MariaDB)', () => {
  let db: TestDatabase;
  let other: DataSource;

  beforeAll(async () => {
    db = await createTestDatabase({ migrate: true });
    other = await db.openDataSource({ overrides: { poolSize: 1 } });
  });

  afterAll(async () => {
    await other?.destroy();
    await db?.drop();
  });

  /** The connection ID of the session in this database with an open InnoDB transaction. */
  async function transactionHolder(): Promise<string | null> {
    const rows = await db.query<{ id: number | string }>(
      `SELECT t.trx_mysql_thread_id AS id FROM information_schema.INNODB_TRX t
         JOIN information_schema.PROCESSLIST p ON p.ID = t.trx_mysql_thread_id WHERE p.DB = ?`,
      [db.name],
    );
    return rows.length === 1 ? String(rows[0].id) : null;
  }

  async function sessionAlive(id: string): Promise<boolean> {
    const rows = await db.query('SELECT ID FROM information_schema.PROCESSLIST WHERE ID = ?', [id]);
    return rows.length === 1;
  }

  /**
   * The holder takes the row of `tag` and falls silent; `other`'s allocation of the tag must
   * go through once the server drops the holder (after IDLE_SEC), not when the test lets go.
   */
  async function silentHolder(tag: string, { asMysql }: { asMysql: boolean }) {
    await db.query('INSERT INTO leaf_alloc (biz_tag, max_id, step) VALUES (?, 1, 100)', [tag]);
    const holderSource = await db.openDataSource({ overrides: { poolSize: 1 } });
    const statements = recordStatements(holderSource, { asMysql });
    const marks = new HangingMarks();
    const holder = new MysqlLeafAllocStore(holderSource, {
      idleTimeoutSec: IDLE_SEC,
      highWater: marks,
    });
    // Waits far longer than the holder's bound: what ends the wait is the holder's session
    // being dropped, not this store giving up.
    const waiter = new MysqlLeafAllocStore(other, { lockWaitTimeoutSec: 30 });
    try {
      const held = holder.allocate(tag);
      held.catch(() => undefined);
      await marks.entered;
      const holderId = await transactionHolder();
      expect(holderId).not.toBeNull();

      const range = await waiter.allocate(tag);
      // The row came free about IDLE_SEC after the holder fell silent, well short of the
      // waiter's 30 s lock wait (the server counts from its answer to the holder's last
      // statement, a moment before the holder's read began).
      const blocked = Date.now() - marks.silentSince;
      expect(blocked).toBeGreaterThan(IDLE_SEC * 1000 - 500);
      expect(blocked).toBeLessThan(IDLE_SEC * 1000 + 3000);
      // The holder's transaction was rolled back: the range starts where the row did.
      expect(rangeOf(range)).toEqual({ start: 1n, end: 101n });

      // It was the holder's session the server dropped: gone from the process list, and its
      // next statement (once it wakes up) fails; nothing of it was committed.
      expect(await sessionAlive(holderId!)).toBe(false);
      marks.release();
      const error = await rejectionOf(held);
      expect(error).toBeInstanceOf(AllocationError);
      expect(error.message).toMatch(/closed state|connection lost|gone away/i);
      expect(await db.maxId(tag)).toBe('101');

      // The holder's DataSource recovers with a new connection, its session as configured.
      const [session] = (await holderSource.query(
        'SELECT @@SESSION.wait_timeout AS wait, @@GLOBAL.wait_timeout AS global_wait',
      )) as Array<{ wait: number | string; global_wait: number | string }>;
      expect(Number(session.wait)).toBe(Number(session.global_wait));
      return { statements, blocked };
    } finally {
      marks.release();
      await holderSource.destroy();
    }
  }

  it('MariaDB (idle_transaction_timeout): the holder is dropped after idleTimeoutSec and the waiter gets the row', async () => {
    const { statements } = await silentHolder('silent-mariadb', { asMysql: false });
    expect(statements[0]).toBe(DETECT_SESSION_BOUND_SQL);
    expect(statements[1]).toMatch(
      new RegExp(
        `^SET .*SESSION innodb_lock_wait_timeout = 5, SESSION idle_transaction_timeout = ${IDLE_SEC}, ` +
          `SESSION idle_write_transaction_timeout = ${IDLE_SEC}, SESSION idle_readonly_transaction_timeout = ${IDLE_SEC}$`,
      ),
    );
    expect(statements[1]).not.toMatch(/SESSION wait_timeout/);
  });

  it('MySQL’s way (wait_timeout around the transaction): the holder is dropped after idleTimeoutSec just the same', async () => {
    const { statements } = await silentHolder('silent-mysql', { asMysql: true });
    expect(statements[1]).toMatch(
      new RegExp(
        `^SET .*SESSION innodb_lock_wait_timeout = 5, SESSION wait_timeout = ${IDLE_SEC}$`,
      ),
    );
  });

  it('puts the pooled session back after each transaction: the application’s own settings survive', async () => {
    await db.query("INSERT INTO leaf_alloc (biz_tag, max_id, step) VALUES ('pooled', 1, 10)");
    const store = new MysqlLeafAllocStore(other, { idleTimeoutSec: 3, lockWaitTimeoutSec: 4 });
    await other.query(
      'SET SESSION wait_timeout = 1234, innodb_lock_wait_timeout = 42, idle_transaction_timeout = 77',
    );
    await store.allocate('pooled');
    await store.updateTag('pooled', { description: 'kept' });
    const [session] = (await other.query(
      `SELECT @@SESSION.wait_timeout AS wait, @@SESSION.innodb_lock_wait_timeout AS lock_wait,
              @@SESSION.idle_transaction_timeout AS idle,
              @@SESSION.idle_write_transaction_timeout AS idle_write`,
    )) as Array<Record<string, number | string>>;
    expect(Object.fromEntries(Object.entries(session).map(([k, v]) => [k, Number(v)]))).toEqual({
      wait: 1234,
      lock_wait: 42,
      idle: 77,
      idle_write: 0,
    });
    // The pool has one connection: the same session throughout, idle past the store's 3 s
    // outside a transaction without being dropped.
    await new Promise((resolve) => setTimeout(resolve, 3500));
    await eventually(async () => expect(await store.findTag('pooled')).not.toBeNull());
  });
});
