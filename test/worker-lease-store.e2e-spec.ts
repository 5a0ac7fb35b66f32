/**
 * The snowflake worker-ID lease table (`leaf_worker_lease`, TypeormWorkerLeaseStore) on real
 * MariaDB and PostgreSQL: claim free, claim expired, refuse live, epoch fencing of a stale
 * renewal, the horizon only grows, release; concurrent claims get distinct worker IDs
 * (docs/design.md, "The database variant").
 */
import type { DataSource } from 'typeorm';
import { createWorkerLeaseStore } from 'nestjs-leaf/typeorm';
import type { WorkerLeaseStore } from '@app/leaf/core/snowflake/worker-lease-store.port';
import { createPostgresTestDatabase } from './support/postgres-database';
import { createTestDatabase } from './support/test-database';
import { describeWithServices } from './support/services';

jest.setTimeout(30_000);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Db {
  openDataSource(options: { migrate?: boolean }): Promise<DataSource>;
  drop(): Promise<void>;
}

function leaseContract(label: 'mysql' | 'postgres', create: () => Promise<Db>): void {
  describeWithServices([label], `leaf_worker_lease on ${label}`, () => {
    let db: Db;
    let dataSource: DataSource;
    let store: WorkerLeaseStore;
    beforeAll(async () => {
      db = await create();
      dataSource = await db.openDataSource({ migrate: true });
      store = createWorkerLeaseStore(dataSource);
    });
    afterAll(async () => {
      await dataSource?.destroy();
      await db?.drop();
    });
    const claim = async (
      name: string,
      holder: string,
      run: string,
      leaseMs = 60_000,
      max = 1023,
    ) => {
      const result = await store.claim({ name, holder, run, leaseMs, maxWorkerId: max });
      if (!('claimed' in result)) throw new Error(`no worker ID for ${holder}`);
      return result.claimed;
    };

    it('claims free worker IDs lowest first, new rows at epoch 1 with no predecessor', async () => {
      const a = await claim('free', 'a:1', 'ra');
      const b = await claim('free', 'b:1', 'rb');
      expect([a.workerId, b.workerId]).toEqual([0, 1]);
      expect(a.epoch).toBe(1n);
      expect(a.previous).toBeNull();
      const rows = await store.list('free');
      expect(rows.map((r) => [r.workerId, r.holder, r.run, r.epoch])).toEqual([
        [0, 'a:1', 'ra', 1n],
        [1, 'b:1', 'rb', 1n],
      ]);
      // Namespaces are independent.
      expect((await claim('other', 'a:1', 'ra')).workerId).toBe(0);
    });

    it('refuses live rows: full when every worker ID is held, with the time to the first expiry', async () => {
      await claim('live', 'a:1', 'ra', 5_000, 1);
      await claim('live', 'b:1', 'rb', 5_000, 1);
      const third = await store.claim({
        name: 'live',
        holder: 'c:1',
        run: 'rc',
        leaseMs: 5_000,
        maxWorkerId: 1,
      });
      expect(third).toEqual({ full: true, retryInMs: expect.any(Number) });
      if ('full' in third) expect(third.retryInMs).toBeGreaterThan(3_000);
      // Not even the same holder takes its own live row (another process may advertise it).
      const again = await store.claim({
        name: 'live',
        holder: 'a:1',
        run: 'ra2',
        leaseMs: 5_000,
        maxWorkerId: 1,
      });
      expect('full' in again).toBe(true);
    });

    it('claims an expired row with epoch + 1 and returns its horizon; the stale holder can no longer renew', async () => {
      const old = await claim('expired', 'a:1', 'ra', 300);
      expect(await store.renew(old, 300, 1_700_000_000_123)).toBe(true);
      await sleep(400);
      const successor = await claim('expired', 'b:1', 'rb');
      expect(successor.workerId).toBe(old.workerId);
      expect(successor.epoch).toBe(old.epoch + 1n);
      expect(successor.previous).toMatchObject({
        holder: 'a:1',
        run: 'ra',
        horizon: 1_700_000_000_123,
      });
      // Fencing: the deposed holder's renewal and release change nothing.
      expect(await store.renew(old, 60_000, 1_800_000_000_000)).toBe(false);
      expect(await store.release(old, 0)).toBe(false);
      const [row] = await store.list('expired');
      expect(row).toMatchObject({
        holder: 'b:1',
        run: 'rb',
        epoch: successor.epoch,
        horizon: 1_700_000_000_123,
      });
    });

    it('prefers the expired row this holder held last', async () => {
      const a = await claim('restart', 'a:1', 'ra', 200);
      const b = await claim('restart', 'b:1', 'rb', 200);
      expect([a.workerId, b.workerId]).toEqual([0, 1]);
      await sleep(300);
      expect((await claim('restart', 'b:1', 'rb2')).workerId).toBe(1);
      expect((await claim('restart', 'a:1', 'ra2')).workerId).toBe(0);
    });

    it('renewal keeps the row live and only raises the horizon', async () => {
      const held = await claim('horizon', 'a:1', 'ra', 300);
      expect(await store.renew(held, 300, 5_000)).toBe(true);
      expect(await store.renew(held, 300, 4_000)).toBe(true);
      expect((await store.list('horizon'))[0]!.horizon).toBe(5_000);
      for (let i = 0; i < 4; i++) {
        await sleep(150);
        expect(await store.renew(held, 300, 6_000 + i)).toBe(true);
      }
      // Renewed past its first expiry: still live.
      expect(
        'full' in
          (await store.claim({
            name: 'horizon',
            holder: 'b:1',
            run: 'rb',
            leaseMs: 300,
            maxWorkerId: 0,
          })),
      ).toBe(true);
      expect((await store.list('horizon'))[0]!.horizon).toBe(6_003);
    });

    it('release lowers the horizon to what was used and frees the row at once', async () => {
      const held = await claim('release', 'a:1', 'ra', 60_000, 0);
      expect(await store.renew(held, 60_000, 9_000)).toBe(true);
      expect(await store.release(held, 7_000)).toBe(true);
      await sleep(5);
      const next = await claim('release', 'b:1', 'rb', 60_000, 0);
      expect(next.workerId).toBe(0);
      expect(next.previous?.horizon).toBe(7_000);
      expect(next.epoch).toBe(held.epoch + 1n);
    });

    it('concurrent claims on several connections get distinct worker IDs', async () => {
      const claims = await Promise.all(
        Array.from({ length: 8 }, (_, i) => claim('race', `h:${i}`, `r${i}`)),
      );
      const ids = claims.map((c) => c.workerId).sort((x, y) => x - y);
      expect(ids).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    });

    it('bigints stay exact: the epoch is read as text', async () => {
      await dataSource.query(
        "INSERT INTO leaf_worker_lease (name, worker_id, holder, run, epoch, expires_at, horizon) VALUES ('big', 0, 'x', 'rx', 9007199254740993, 0, 0)",
      );
      const next = await claim('big', 'a:1', 'ra');
      expect(next.epoch).toBe(9007199254740994n);
    });
  });
}

leaseContract('mysql', () => createTestDatabase());
leaseContract('postgres', () => createPostgresTestDatabase());
