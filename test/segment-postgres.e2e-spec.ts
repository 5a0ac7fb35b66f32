/**
 * What PostgresLeafAllocStore and the migrations do on real PostgreSQL beyond the store
 * contract (test/contracts/leaf-alloc-store.postgres.e2e-spec.ts): the lock timeout, the
 * bound on a silent holder of the row lock (`idle_in_transaction_session_timeout`), the
 * trigger that refuses to lower `max_id`, the high-water mark, residue classes, and the
 * migrations' schema, adoption and revert.
 */
import { DataSource, type DataSourceOptions } from 'typeorm';
import {
  LEAF_MIGRATIONS,
  LEAF_MIGRATIONS_TABLE_NAME,
  createLeafAllocStore,
  PostgresLeafAllocStore,
} from 'nestjs-leaf/storage/typeorm';
import { AllocationError, AllocationLockTimeoutError } from 'nestjs-leaf/errors';
import type { HighWaterMark, HighWaterStore } from '@app/leaf/core/segment/high-water';
import { rangeOf, rejectionOf } from '@app/leaf/testing/test-helpers';
import { createPostgresTestDatabase, type PostgresTestDatabase } from './support/postgres-database';
import { describeWithServices } from './support/services';

jest.setTimeout(30_000);

/** Marks in memory; with `hang`, reads wait until {@link release} (the holder falls silent). */
class MapMarks implements HighWaterStore {
  readonly marks = new Map<string, HighWaterMark>();
  private resume: () => void = () => undefined;
  private readonly resumed: Promise<void>;
  /** Resolves once a read has started: the row is locked and the session is silent. */
  readonly entered: Promise<void>;
  private enter!: () => void;
  silentSince = 0;

  constructor(private readonly hang = false) {
    this.resumed = new Promise<void>((resolve) => (this.resume = resolve));
    this.entered = new Promise<void>((resolve) => (this.enter = resolve));
  }

  async read(tag: string): Promise<HighWaterMark | null> {
    this.silentSince ||= Date.now();
    this.enter();
    if (this.hang) await this.resumed;
    return this.marks.get(tag) ?? null;
  }

  async write(tag: string, value: bigint, expected: HighWaterMark | null): Promise<boolean> {
    const current = this.marks.get(tag) ?? null;
    if ((current?.version ?? null) !== (expected?.version ?? null)) return false;
    this.marks.set(tag, { value, version: (current?.version ?? -1) + 1 });
    return true;
  }

  release(): void {
    this.resume();
  }
}

describeWithServices(['postgres'], 'segment mode on PostgreSQL (library level)', () => {
  let db: PostgresTestDatabase;
  let dataSource: DataSource;

  beforeAll(async () => {
    db = await createPostgresTestDatabase({ migrate: true });
    // One connection: "the connection stays usable" is then literally the same connection.
    dataSource = await db.openDataSource({ overrides: { poolSize: 1 } });
  });

  afterAll(async () => {
    await dataSource?.destroy();
    await db?.drop();
  });

  const insert = (tag: string, maxId: bigint, step: number) =>
    db.query(`INSERT INTO leaf_alloc (biz_tag, max_id, step) VALUES ($1, ${maxId}, $2)`, [
      tag,
      step,
    ]);
  const backendPid = async (): Promise<number> =>
    ((await dataSource.query('SELECT pg_backend_pid() AS pid')) as Array<{ pid: number }>)[0].pid;

  it('createLeafAllocStore picks PostgresLeafAllocStore for the postgres driver, with or without a mark', () => {
    expect(createLeafAllocStore(dataSource)).toBeInstanceOf(PostgresLeafAllocStore);
    const fenced = createLeafAllocStore(dataSource, { highWater: new MapMarks() });
    expect(fenced).toMatchObject({ fenced: true });
  });

  describe('row lock held by another session', () => {
    it('times out with AllocationLockTimeoutError, writes nothing, and the connection works right after', async () => {
      const store = new PostgresLeafAllocStore(dataSource, { lockWaitTimeoutSec: 1 });
      await insert('locked', 1n, 10);
      expect(rangeOf(await store.allocate('locked'))).toEqual({ start: 1n, end: 11n });
      const pidBefore = await backendPid();
      const holder = await db.connect();
      try {
        await holder.query('BEGIN');
        await holder.query("SELECT max_id FROM leaf_alloc WHERE biz_tag = 'locked' FOR UPDATE");
        await holder.query("UPDATE leaf_alloc SET max_id = max_id + 100 WHERE biz_tag = 'locked'");

        const startedAt = Date.now();
        const error = await rejectionOf(store.allocate('locked'));
        const waited = Date.now() - startedAt;
        expect(error).toBeInstanceOf(AllocationLockTimeoutError);
        expect(error).toMatchObject({ tag: 'locked' });
        expect(waited).toBeGreaterThanOrEqual(900);
        expect(waited).toBeLessThan(5000);

        // Rolled back, same connection, out of any transaction, its own settings intact.
        expect(await backendPid()).toBe(pidBefore);
        expect(
          await dataSource.query(
            "SELECT current_setting('lock_timeout') AS lock, current_setting('idle_in_transaction_session_timeout') AS idle, now() = statement_timestamp() AS autocommit",
          ),
        ).toEqual([{ lock: '0', idle: '0', autocommit: true }]);
      } finally {
        await holder.query('COMMIT').catch(() => undefined);
        await holder.end();
      }
      expect(rangeOf(await store.allocate('locked'))).toEqual({ start: 111n, end: 121n });
      expect(await db.maxId('locked')).toBe('121');
    });

    it('waits for a lock released within the timeout and then sees the committed max_id', async () => {
      const store = new PostgresLeafAllocStore(dataSource, { lockWaitTimeoutSec: 5 });
      await insert('lock-wait', 1n, 10);
      const holder = await db.connect();
      try {
        await holder.query('BEGIN');
        await holder.query(
          "UPDATE leaf_alloc SET max_id = max_id + 1000 WHERE biz_tag = 'lock-wait'",
        );
        const startedAt = Date.now();
        const pending = store.allocate('lock-wait');
        await new Promise((resolve) => setTimeout(resolve, 300));
        await holder.query('COMMIT');
        expect(rangeOf(await pending)).toEqual({ start: 1001n, end: 1011n });
        expect(Date.now() - startedAt).toBeGreaterThanOrEqual(250);
      } finally {
        await holder.end();
      }
    });
  });

  it('a silent holder of the row lock is ended by the server after idleTimeoutSec, and the waiter gets the row', async () => {
    const IDLE_SEC = 2;
    await insert('silent', 1n, 100);
    const holderSource = await db.openDataSource({ overrides: { poolSize: 1 } });
    const marks = new MapMarks(true);
    const holder = new PostgresLeafAllocStore(holderSource, {
      idleTimeoutSec: IDLE_SEC,
      highWater: marks,
    });
    // Waits far longer than the holder's bound: what ends the wait is the holder's session.
    const waiter = new PostgresLeafAllocStore(dataSource, { lockWaitTimeoutSec: 30 });
    try {
      const held = holder.allocate('silent');
      held.catch(() => undefined);
      await marks.entered;
      const [{ pid }] = await db.query<{ pid: number }>(
        "SELECT pid FROM pg_stat_activity WHERE datname = $1 AND state = 'idle in transaction'",
        [db.name],
      );

      const range = await waiter.allocate('silent');
      const blocked = Date.now() - marks.silentSince;
      expect(blocked).toBeGreaterThan(IDLE_SEC * 1000 - 500);
      expect(blocked).toBeLessThan(IDLE_SEC * 1000 + 3000);
      // The holder's transaction was rolled back: the range starts where the row did.
      expect(rangeOf(range)).toEqual({ start: 1n, end: 101n });
      expect(await db.query('SELECT pid FROM pg_stat_activity WHERE pid = $1', [pid])).toEqual([]);

      marks.release();
      expect(await rejectionOf(held)).toBeInstanceOf(AllocationError);
      expect(await db.maxId('silent')).toBe('101');
      // The holder's DataSource recovers with a new connection.
      expect(rangeOf(await holder.allocate('silent'))).toEqual({ start: 101n, end: 201n });
    } finally {
      marks.release();
      await holderSource.destroy();
    }
  });

  describe('the trigger leaf_alloc_max_id_guard', () => {
    it('refuses to lower max_id by hand, lets it rise, and lets only a marked hand-back from the current value lower it', async () => {
      await insert('guarded', 5000n, 10);
      await expect(
        db.query("UPDATE leaf_alloc SET max_id = max_id - 10 WHERE biz_tag = 'guarded'"),
      ).rejects.toThrow(/leaf_alloc.max_id may not be lowered.*leaf_alloc_max_id_guard/);
      await db.query("UPDATE leaf_alloc SET max_id = max_id + 10 WHERE biz_tag = 'guarded'");
      expect(await db.maxId('guarded')).toBe('5010');

      const session = await db.connect();
      try {
        // A mark for another value is no mark.
        await session.query('BEGIN');
        await session.query("SELECT set_config('leaf.hand_back_from', '5000', true)");
        await expect(
          session.query("UPDATE leaf_alloc SET max_id = 5005 WHERE biz_tag = 'guarded'"),
        ).rejects.toThrow(/may not be lowered/);
        await session.query('ROLLBACK');
        // The store's hand-back: marked from exactly the current max_id, in its transaction.
        await session.query('BEGIN');
        await session.query("SELECT set_config('leaf.hand_back_from', '5010', true)");
        await session.query("UPDATE leaf_alloc SET max_id = 5005 WHERE biz_tag = 'guarded'");
        await session.query('COMMIT');
        // The mark ended with that transaction.
        await expect(
          session.query("UPDATE leaf_alloc SET max_id = 5001 WHERE biz_tag = 'guarded'"),
        ).rejects.toThrow(/may not be lowered/);
      } finally {
        await session.end();
      }
      expect(await db.maxId('guarded')).toBe('5005');
    });
  });

  describe('with a high-water mark', () => {
    it('starts a range at the mark when max_id went back, raises the mark before COMMIT, and lowers it on hand-back', async () => {
      const marks = new MapMarks();
      const store = new PostgresLeafAllocStore(dataSource, { highWater: marks });
      expect(store.fenced).toBe(true);
      await insert('marked', 1n, 10);
      expect(rangeOf(await store.allocate('marked'))).toEqual({ start: 1n, end: 11n });
      expect(marks.marks.get('marked')?.value).toBe(11n);

      // A restore: the row is back at 1 (delete and insert fire no update trigger).
      await db.query("DELETE FROM leaf_alloc WHERE biz_tag = 'marked'");
      await insert('marked', 1n, 10);
      const repaired = await store.allocate('marked');
      expect(rangeOf(repaired)).toEqual({ start: 11n, end: 21n });
      expect(repaired.repair).toMatchObject({ maxId: 1n, highWater: 11n, kind: 'regression' });

      expect(await store.handBack('marked', 21n, 15n)).toBe(true);
      expect(marks.marks.get('marked')?.value).toBe(15n);
      expect(await db.maxId('marked')).toBe('15');
    });
  });

  it('reads the residue class of each row with residueClasses', async () => {
    await db.query(
      "INSERT INTO leaf_alloc (biz_tag, max_id, step, id_modulus, id_residue) VALUES ('classed', 1, 10, 2, 1)",
    );
    const store = new PostgresLeafAllocStore(dataSource, { residueClasses: true });
    expect(await store.allocate('classed')).toMatchObject({ maxId: 11n, modulus: 2, residue: 1 });
    expect(await store.findTag('classed')).toMatchObject({ modulus: 2, residue: 1 });
  });

  describe('LEAF_MIGRATIONS', () => {
    let scratch: PostgresTestDatabase;
    let source: DataSource;

    beforeEach(async () => {
      scratch = await createPostgresTestDatabase();
    });

    afterEach(async () => {
      if (source?.isInitialized) await source.destroy();
      await scratch?.drop();
    });

    const open = async (): Promise<DataSource> => {
      source = new DataSource({
        type: 'postgres',
        url: scratch.url,
        migrations: LEAF_MIGRATIONS,
        migrationsTableName: LEAF_MIGRATIONS_TABLE_NAME,
      } as DataSourceOptions);
      await source.initialize();
      await source.runMigrations({ transaction: 'each' });
      return source;
    };
    const columns = () =>
      scratch.query<{ column_name: string; type: string }>(
        `SELECT column_name, format_type(atttypid, atttypmod) AS type
           FROM information_schema.columns c
           JOIN pg_attribute a ON a.attrelid = 'leaf_alloc'::regclass AND a.attname = c.column_name
          WHERE c.table_name = 'leaf_alloc' ORDER BY c.ordinal_position`,
      );
    const undoAll = async () => {
      for (let i = 0; i < LEAF_MIGRATIONS.length; i++)
        await source.undoLastMigration({ transaction: 'each' });
    };

    it('create the Java Leaf’s columns, the residue class and the trigger, and revert them while no range was handed out', async () => {
      await open();
      expect(await columns()).toEqual([
        { column_name: 'biz_tag', type: 'character varying(128)' },
        { column_name: 'max_id', type: 'bigint' },
        { column_name: 'step', type: 'integer' },
        { column_name: 'description', type: 'character varying(256)' },
        { column_name: 'update_time', type: 'timestamp without time zone' },
        { column_name: 'id_modulus', type: 'integer' },
        { column_name: 'id_residue', type: 'integer' },
      ]);
      expect(
        await scratch.query("SELECT tgname FROM pg_trigger WHERE tgrelid = 'leaf_alloc'::regclass"),
      ).toEqual([{ tgname: 'leaf_alloc_max_id_guard' }]);
      await undoAll();
      expect(await scratch.query("SELECT to_regclass('leaf_alloc') AS t")).toEqual([{ t: null }]);
      expect(
        await scratch.query(
          "SELECT proname FROM pg_proc WHERE proname = 'leaf_alloc_max_id_guard'",
        ),
      ).toEqual([]);
    });

    it('adopt an existing leaf_alloc as it is, and refuse to drop allocated ranges', async () => {
      await scratch.query(
        'CREATE TABLE leaf_alloc (biz_tag varchar(128) NOT NULL PRIMARY KEY, max_id bigint NOT NULL DEFAULT 1, step int NOT NULL, description varchar(256), update_time timestamp NOT NULL DEFAULT CURRENT_TIMESTAMP)',
      );
      await scratch.query(
        "INSERT INTO leaf_alloc (biz_tag, max_id, step) VALUES ('order', 9007199254740993, 1000)",
      );
      await open();
      expect(
        await scratch.query('SELECT biz_tag, max_id::text, id_modulus, id_residue FROM leaf_alloc'),
      ).toEqual([{ biz_tag: 'order', max_id: '9007199254740993', id_modulus: 1, id_residue: 0 }]);
      await expect(undoAll()).rejects.toThrow(/Refusing to drop leaf_alloc/);
      expect(await scratch.maxId('order')).toBe('9007199254740993');
    });
  });
});
