import { ScheduleModule, SchedulerRegistry } from '@nestjs/schedule';
import { Test, type TestingModule } from '@nestjs/testing';
import type { DataSource } from 'typeorm';
import { LeafErrorCode, LeafModule, SegmentService } from 'nestjs-leaf';
import { AllocationLockTimeoutError, IdOverflowError, TagNotFoundError } from 'nestjs-leaf/errors';
import { MysqlLeafAllocStore } from 'nestjs-leaf/storage/typeorm';
import { MAX_INT64 } from 'nestjs-leaf/ports';
import { LEAF_JOB_NAMES } from '@app/leaf/nest/leaf.constants';
import { describeWithServices } from './support/services';
import { createTestDatabase, type TestDatabase } from './support/test-database';
import { rangeOf, rejectionOf } from '@app/leaf/testing/test-helpers';

/** Polls `condition` every 20 ms until it holds or `timeoutMs` passes. */
async function eventually(condition: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describeWithServices(['mysql'], 'segment mode on MariaDB (library level)', () => {
  let db: TestDatabase;

  beforeAll(async () => {
    db = await createTestDatabase({ migrate: true });
  });

  afterAll(async () => {
    await db?.drop();
  });

  describe('MysqlLeafAllocStore', () => {
    it('gives 50 concurrent allocations on 50 connections pairwise-disjoint ranges that tile [start, end)', async () => {
      await db.query(
        "INSERT INTO leaf_alloc (biz_tag, max_id, step) VALUES ('concurrent', 1000, 100)",
      );
      const dataSource = await db.openDataSource({ overrides: { poolSize: 60 } });
      try {
        const store = new MysqlLeafAllocStore(dataSource);
        // Half take the row's step, half a custom step, as the dynamic step policy does.
        const steps = Array.from({ length: 50 }, (_, i) => (i % 2 === 0 ? undefined : i + 1));
        const allocations = await Promise.all(
          steps.map((step) => store.allocate('concurrent', step)),
        );

        // Every transaction ran on a connection of its own.
        const [{ connections }] = await db.query<{ connections: number }>(
          'SELECT COUNT(*) AS connections FROM information_schema.PROCESSLIST WHERE DB = ?',
          [db.name],
        );
        expect(Number(connections)).toBeGreaterThanOrEqual(50);

        allocations.forEach((allocation, i) => {
          expect(allocation.tag).toBe('concurrent');
          expect(allocation.baseStep).toBe(100);
          expect(allocation.appliedStep).toBe(steps[i] ?? 100);
        });
        const ranges = allocations
          .map(rangeOf)
          .sort((a, b) => (a.start < b.start ? -1 : a.start > b.start ? 1 : 0));
        expect(ranges[0].start).toBe(1000n);
        for (let i = 1; i < ranges.length; i++) {
          // Sorted and each starting exactly where the previous ended: disjoint, no gap.
          expect(ranges[i].start).toBe(ranges[i - 1].end);
        }
        const total = steps.reduce<number>((sum, step) => sum + (step ?? 100), 0);
        expect(ranges[ranges.length - 1].end).toBe(1000n + BigInt(total));
        expect(await db.maxId('concurrent')).toBe(String(1000 + total));
      } finally {
        await dataSource.destroy();
      }
    });

    describe('row lock held by another session', () => {
      let dataSource: DataSource;
      let store: MysqlLeafAllocStore;

      beforeAll(async () => {
        // One connection: "the connection stays usable" is then literally the same connection.
        dataSource = await db.openDataSource({ overrides: { poolSize: 1 } });
        store = new MysqlLeafAllocStore(dataSource, { lockWaitTimeoutSec: 1 });
      });

      afterAll(async () => {
        await dataSource?.destroy();
      });

      const connectionId = async (): Promise<string> => {
        const [row] = (await dataSource.query('SELECT CONNECTION_ID() AS id')) as Array<{
          id: string | number;
        }>;
        return String(row.id);
      };

      it('times out with AllocationLockTimeoutError, writes nothing, and the connection works right after', async () => {
        await db.query("INSERT INTO leaf_alloc (biz_tag, max_id, step) VALUES ('locked', 1, 10)");
        const first = rangeOf(await store.allocate('locked'));
        expect(first).toEqual({ start: 1n, end: 11n });
        const connectionBefore = await connectionId();

        const holder = await db.connect();
        try {
          await holder.query('BEGIN');
          await holder.query("SELECT max_id FROM leaf_alloc WHERE biz_tag = 'locked' FOR UPDATE");
          // Another instance takes a range while it holds the lock.
          await holder.query(
            "UPDATE leaf_alloc SET max_id = max_id + 100 WHERE biz_tag = 'locked'",
          );

          const startedAt = Date.now();
          const error = await rejectionOf(store.allocate('locked'));
          const waited = Date.now() - startedAt;
          expect(error).toBeInstanceOf(AllocationLockTimeoutError);
          expect((error as AllocationLockTimeoutError).code).toBe(
            LeafErrorCode.ALLOCATION_LOCK_TIMEOUT,
          );
          expect((error as AllocationLockTimeoutError).tag).toBe('locked');
          // The store's 1 s, not the server's default of 50 s.
          expect(waited).toBeGreaterThanOrEqual(900);
          expect(waited).toBeLessThan(5000);

          // The failed transaction was rolled back and the connection is back in the pool,
          // usable while the other session still holds its lock.
          expect(await connectionId()).toBe(connectionBefore);
          const [state] = (await dataSource.query('SELECT @@in_transaction AS open')) as Array<{
            open: number;
          }>;
          expect(Number(state.open)).toBe(0);
          // The store's lock wait is scoped to its transaction: the pooled session keeps its own.
          const [session] = (await dataSource.query(
            'SELECT @@SESSION.innodb_lock_wait_timeout AS timeout, @@GLOBAL.innodb_lock_wait_timeout AS global',
          )) as Array<{ timeout: number | string; global: number | string }>;
          expect(Number(session.timeout)).toBe(Number(session.global));
          const other = await store.allocate('leaf-segment-test');
          expect(rangeOf(other)).toEqual({ start: 1n, end: 2001n });
        } finally {
          await holder.query('COMMIT').catch(() => undefined);
          await holder.end();
        }

        // Released: the next allocation succeeds at once, after the other session's range.
        const next = rangeOf(await store.allocate('locked'));
        expect(next).toEqual({ start: 111n, end: 121n });
        expect(next.start).toBeGreaterThanOrEqual(first.end);
        expect(await connectionId()).toBe(connectionBefore);
        expect(await db.maxId('locked')).toBe('121');
      });

      it('waits for a lock released within the timeout and then sees the committed max_id', async () => {
        await db.query(
          "INSERT INTO leaf_alloc (biz_tag, max_id, step) VALUES ('lock-wait', 1, 10)",
        );
        const patient = new MysqlLeafAllocStore(dataSource, { lockWaitTimeoutSec: 5 });
        const holder = await db.connect();
        try {
          await holder.query('BEGIN');
          await holder.query(
            "SELECT max_id FROM leaf_alloc WHERE biz_tag = 'lock-wait' FOR UPDATE",
          );
          await holder.query(
            "UPDATE leaf_alloc SET max_id = max_id + 1000 WHERE biz_tag = 'lock-wait'",
          );
          const startedAt = Date.now();
          const pending = patient.allocate('lock-wait');
          await new Promise((resolve) => setTimeout(resolve, 300));
          await holder.query('COMMIT');
          expect(rangeOf(await pending)).toEqual({ start: 1001n, end: 1011n });
          // It was blocked by the lock, not served from a stale read.
          expect(Date.now() - startedAt).toBeGreaterThanOrEqual(250);
        } finally {
          await holder.end();
        }
      });
    });

    describe('refusals', () => {
      let dataSource: DataSource;
      let store: MysqlLeafAllocStore;

      beforeAll(async () => {
        dataSource = await db.openDataSource();
        store = new MysqlLeafAllocStore(dataSource);
      });

      afterAll(async () => {
        await dataSource?.destroy();
      });

      it('rejects an unknown tag with TagNotFoundError and never creates its row', async () => {
        const [{ rows: before }] = await db.query<{ rows: number }>(
          'SELECT COUNT(*) AS `rows` FROM leaf_alloc',
        );
        const error = await rejectionOf(store.allocate('no-such-tag'));
        expect(error).toBeInstanceOf(TagNotFoundError);
        expect((error as TagNotFoundError).code).toBe(LeafErrorCode.TAG_NOT_FOUND);
        expect(await rejectionOf(store.allocate('no-such-tag', 5))).toBeInstanceOf(
          TagNotFoundError,
        );
        const [{ rows: after }] = await db.query<{ rows: number }>(
          'SELECT COUNT(*) AS `rows` FROM leaf_alloc',
        );
        expect(Number(after)).toBe(Number(before));
        expect(await db.maxId('no-such-tag')).toBeNull();
      });

      it('refuses to pass 2^63-1 with IdOverflowError and leaves max_id unchanged', async () => {
        await db.query(
          "INSERT INTO leaf_alloc (biz_tag, max_id, step) VALUES ('near-max', 9223372036854775800, 10)",
        );
        const error = await rejectionOf(store.allocate('near-max'));
        expect(error).toBeInstanceOf(IdOverflowError);
        expect((error as IdOverflowError).code).toBe(LeafErrorCode.ID_OVERFLOW);
        expect((error as IdOverflowError).maxId).toBe(9223372036854775800n);
        expect(await db.maxId('near-max')).toBe('9223372036854775800');

        // Up to the last value exactly is allowed; one more is not.
        const last = await store.allocate('near-max', 7);
        expect(last.maxId).toBe(MAX_INT64);
        expect(rangeOf(last)).toEqual({ start: 9223372036854775800n, end: 9223372036854775807n });
        expect(await rejectionOf(store.allocate('near-max', 1))).toBeInstanceOf(IdOverflowError);
        expect(await db.maxId('near-max')).toBe('9223372036854775807');
      });

      it('allocates exact bigint values beyond 2^53', async () => {
        await db.query(
          "INSERT INTO leaf_alloc (biz_tag, max_id, step) VALUES ('beyond-2-53', 9007199254740990, 10)",
        );
        expect(rangeOf(await store.allocate('beyond-2-53'))).toEqual({
          start: 9007199254740990n,
          end: 9007199254741000n,
        });
        expect(rangeOf(await store.allocate('beyond-2-53', 3))).toEqual({
          start: 9007199254741000n,
          end: 9007199254741003n,
        });
        expect(await db.maxId('beyond-2-53')).toBe('9007199254741003');
        const listed = (await store.listAll()).find((row) => row.tag === 'beyond-2-53');
        expect(listed?.maxId).toBe(9007199254741003n);
      });
    });
  });

  describe('SegmentService with tags added and removed at runtime', () => {
    let tagsDb: TestDatabase;
    let dataSource: DataSource;

    beforeAll(async () => {
      // A database of its own: these tests empty the table.
      tagsDb = await createTestDatabase();
      dataSource = await tagsDb.openDataSource({ migrate: true });
    });

    afterAll(async () => {
      await dataSource?.destroy();
      await tagsDb?.drop();
    });

    const boot = async (refreshIntervalMs: number): Promise<TestingModule> => {
      const moduleRef = await Test.createTestingModule({
        imports: [
          ScheduleModule.forRoot(),
          LeafModule.forRoot({ segment: { dataSource, refreshIntervalMs }, snowflake: false }),
        ],
      }).compile();
      moduleRef.useLogger(false);
      await moduleRef.init();
      return moduleRef;
    };

    it('serves a new tag at once (looked up), answers TagNotFound for a deleted one, also when the table is empty', async () => {
      const moduleRef = await boot(60_000);
      try {
        const segments = moduleRef.get(SegmentService);
        expect(segments.tags()).toEqual(['leaf-segment-test']);
        expect(await segments.get('leaf-segment-test')).toBe(1n);

        await tagsDb.query(
          "INSERT INTO leaf_alloc (biz_tag, max_id, step) VALUES ('added-later', 500, 10)",
        );
        // Served at once, before any refresh: an unknown key is looked up in the table.
        expect(await segments.get('added-later')).toBe(500n);
        expect(segments.tags().sort()).toEqual(['added-later', 'leaf-segment-test']);
        // A key that is in no row is not created by asking.
        expect(await rejectionOf(segments.get('never-added'))).toBeInstanceOf(TagNotFoundError);
        expect(await tagsDb.maxId('never-added')).toBeNull();

        await segments.refreshTags();
        expect(segments.tags().sort()).toEqual(['added-later', 'leaf-segment-test']);
        expect(await segments.getIds('added-later', 3)).toEqual([501n, 502n, 503n]);
        const handle = segments.generator('added-later');
        expect(handle.next()).toBe(504n);

        await tagsDb.query("DELETE FROM leaf_alloc WHERE biz_tag = 'added-later'");
        await segments.refreshTags();
        expect(segments.tags()).toEqual(['leaf-segment-test']);
        for (const call of [
          () => segments.get('added-later'),
          () => segments.getIds('added-later', 2),
          () => segments.getRange('added-later', 2),
        ]) {
          const error = await rejectionOf(call());
          expect(error).toBeInstanceOf(TagNotFoundError);
          expect((error as TagNotFoundError).code).toBe(LeafErrorCode.TAG_NOT_FOUND);
        }
        // A handle taken before the deletion stops too; its buffer is gone.
        expect(() => handle.next()).toThrow(TagNotFoundError);
        expect(await tagsDb.maxId('added-later')).toBeNull();

        await tagsDb.query('DELETE FROM leaf_alloc');
        await segments.refreshTags();
        expect(segments.tags()).toEqual([]);
        expect(segments.initialized).toBe(true);
        const error = await rejectionOf(segments.get('leaf-segment-test'));
        expect(error).toBeInstanceOf(TagNotFoundError);
        expect((error as TagNotFoundError).code).toBe(LeafErrorCode.TAG_NOT_FOUND);
        expect(await tagsDb.maxId('leaf-segment-test')).toBeNull();
      } finally {
        await moduleRef.close();
      }
    });

    it('refreshes the tag list periodically through SchedulerRegistry and stops on close', async () => {
      await tagsDb.query('DELETE FROM leaf_alloc');
      await tagsDb.query(
        "INSERT INTO leaf_alloc (biz_tag, max_id, step) VALUES ('periodic-a', 1, 10)",
      );
      const moduleRef = await boot(100);
      const scheduler = moduleRef.get(SchedulerRegistry);
      try {
        const segments = moduleRef.get(SegmentService);
        expect(scheduler.doesExist('interval', LEAF_JOB_NAMES.segmentRefresh('leaf'))).toBe(true);
        expect(segments.tags()).toEqual(['periodic-a']);

        await tagsDb.query(
          "INSERT INTO leaf_alloc (biz_tag, max_id, step) VALUES ('periodic-b', 70, 10)",
        );
        await eventually(() => segments.tags().includes('periodic-b'), 3000);
        expect(await segments.get('periodic-b')).toBe(70n);

        await tagsDb.query("DELETE FROM leaf_alloc WHERE biz_tag = 'periodic-a'");
        await eventually(() => !segments.tags().includes('periodic-a'), 3000);
        expect(await rejectionOf(segments.get('periodic-a'))).toBeInstanceOf(TagNotFoundError);

        await tagsDb.query('DELETE FROM leaf_alloc');
        await eventually(() => segments.tags().length === 0, 3000);
        expect(await rejectionOf(segments.get('periodic-b'))).toBeInstanceOf(TagNotFoundError);
      } finally {
        await moduleRef.close();
      }
      expect(scheduler.getIntervals()).toEqual([]);
    });
  });
});
