import { randomBytes } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { LeafErrorCode } from 'nestjs-leaf';
import { MysqlLeafAllocStore } from 'nestjs-leaf/storage/typeorm';
import { ZookeeperHighWaterStore } from '@app/leaf/adapters/zookeeper/zookeeper-high-water.store';
import type { ZookeeperClient } from '@app/leaf/adapters/zookeeper/zookeeper.client';
import { describeWithServices } from './support/services';
import { createTestDatabase, type TestDatabase } from './support/test-database';
import { connectZookeeperAdmin, deleteTree } from './support/zookeeper';
import { rejectionOf } from '@app/leaf/testing/test-helpers';

/**
 * The high-water mark on real MariaDB and ZooKeeper (library level): a lowered or restored
 * `max_id` is repaired by the next allocation, the hand-back lowers mark and row together,
 * and the trigger of LEAF_MIGRATIONS refuses a hand edit that lowers `max_id`.
 */
describeWithServices(
  ['mysql', 'zookeeper'],
  'segment high-water mark (MariaDB + ZooKeeper)',
  () => {
    let db: TestDatabase;
    let dataSource: DataSource;
    let zk: ZookeeperClient;
    const name = `hwm-${randomBytes(4).toString('hex')}`;

    beforeAll(async () => {
      db = await createTestDatabase({ migrate: true });
      dataSource = await db.openDataSource();
      zk = await connectZookeeperAdmin();
    });

    afterAll(async () => {
      if (zk) {
        await deleteTree(zk, `/segment/${name}`);
        await zk.close();
      }
      await dataSource?.destroy();
      await db?.drop();
    });

    const fenced = () =>
      new MysqlLeafAllocStore(dataSource, { highWater: new ZookeeperHighWaterStore(zk, name) });

    /** A hand edit that lowers max_id, past the trigger (as after dropping it, or a restore). */
    async function lower(tag: string, to: bigint): Promise<void> {
      const session = await db.connect();
      try {
        const [[row]] = (await session.query(
          'SELECT CAST(max_id AS CHAR) AS m FROM leaf_alloc WHERE biz_tag = ?',
          [tag],
        )) as unknown as [[{ m: string }]];
        await session.query(`SET @leaf_hand_back_from = ${row.m}`);
        await session.query(`UPDATE leaf_alloc SET max_id = ${to} WHERE biz_tag = ?`, [tag]);
      } finally {
        await session.end();
      }
    }

    it('repairs a lowered max_id once, in the allocation that finds it, across two stores (instances)', async () => {
      await db.query("INSERT INTO leaf_alloc (biz_tag, max_id, step) VALUES ('hw-a', 1, 1000)");
      const a = fenced();
      const b = fenced();
      const first = await a.allocate('hw-a');
      expect(first).toMatchObject({ maxId: 1001n, repair: null });
      const second = await b.allocate('hw-a');
      expect(second.maxId).toBe(2001n);
      await lower('hw-a', 1n);
      // A third instance that never saw the lost ranges starts above them.
      const repaired = await fenced().allocate('hw-a');
      expect(repaired).toMatchObject({
        maxId: 3001n,
        repair: { maxId: 1n, highWater: 2001n, kind: 'regression' },
      });
      const next = await a.allocate('hw-a');
      expect(next).toMatchObject({ maxId: 4001n, repair: null });
      expect(await db.maxId('hw-a')).toBe('4001');
    });

    it('hand-back: lowers the mark and max_id from exactly ours, so the next range starts at the first unused ID', async () => {
      await db.query("INSERT INTO leaf_alloc (biz_tag, max_id, step) VALUES ('hw-b', 1, 1000)");
      const a = fenced();
      await a.allocate('hw-b');
      expect(await a.handBack('hw-b', 1001n, 301n)).toBe(true);
      expect(await db.maxId('hw-b')).toBe('301');
      const next = await fenced().allocate('hw-b');
      expect(next).toMatchObject({ maxId: 1301n, repair: null });
      // Not ours any more: nothing is lowered.
      expect(await a.handBack('hw-b', 1001n, 500n)).toBe(false);
      expect(await db.maxId('hw-b')).toBe('1301');
    });

    it('the trigger refuses a hand edit that lowers max_id; raising it is fine', async () => {
      await db.query("INSERT INTO leaf_alloc (biz_tag, max_id, step) VALUES ('hw-c', 5001, 1000)");
      await expect(
        db.query("UPDATE leaf_alloc SET max_id = max_id - 5000 WHERE biz_tag = 'hw-c'"),
      ).rejects.toThrow(/may not be lowered/);
      expect(await db.maxId('hw-c')).toBe('5001');
      await db.query("UPDATE leaf_alloc SET max_id = max_id + 5 WHERE biz_tag = 'hw-c'");
      expect(await db.maxId('hw-c')).toBe('5006');
    });

    it('refuses to allocate (LEAF_HIGH_WATER_UNAVAILABLE) while ZooKeeper is disconnected, writing nothing', async () => {
      await db.query("INSERT INTO leaf_alloc (biz_tag, max_id, step) VALUES ('hw-d', 1, 1000)");
      const closed = await connectZookeeperAdmin();
      await closed.close();
      const store = new MysqlLeafAllocStore(dataSource, {
        highWater: new ZookeeperHighWaterStore(closed, name),
      });
      const error = await rejectionOf(store.allocate('hw-d'));
      expect(error).toMatchObject({ code: LeafErrorCode.HIGH_WATER_UNAVAILABLE, tag: 'hw-d' });
      expect(await db.maxId('hw-d')).toBe('1');
    });
  },
);
