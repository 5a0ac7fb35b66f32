import type {
  WorkerLeaseClaim,
  WorkerLeaseRow,
  WorkerLeaseStore,
} from '../../core/snowflake/worker-lease-store.port';
import { defineContract } from './contract-runner';
import type { LeaseTableHarness } from './lease-table.harness';

/** What {@link workerLeaseStoreContract} needs of one implementation. */
export interface WorkerLeaseStoreHarness extends LeaseTableHarness<WorkerLeaseRow> {
  readonly store: WorkerLeaseStore;
}

/**
 * The contract of a {@link WorkerLeaseStore} (docs/design.md, "The database variant"): claim
 * free IDs lowest first, never a live row, an expired row with `epoch + 1` and its horizon, the
 * holder's own expired row first; renewals and releases fenced by run and epoch; the horizon
 * only grows while renewing; concurrent claims get distinct IDs; epochs stay exact.
 */
export const workerLeaseStoreContract = defineContract<WorkerLeaseStoreHarness>(
  'WorkerLeaseStore',
  (harness, runner) => {
    const { it, expect } = runner;
    const claim = async (
      namespace: string,
      holder: string,
      run: string,
      leaseMs = 60_000,
      maxWorkerId = 1023,
      journal: { instance: string } | null = null,
    ): Promise<WorkerLeaseClaim> => {
      const result = await harness().store.claim({
        name: namespace,
        holder,
        run,
        leaseMs,
        maxWorkerId,
        journal,
      });
      if (!('claimed' in result)) throw new Error(`no worker ID for ${holder}`);
      return result.claimed;
    };

    it('claims free worker IDs lowest first, new rows at epoch 1 with no predecessor', async () => {
      const a = await claim('free', 'a:1', 'ra');
      const b = await claim('free', 'b:1', 'rb');
      expect([a.workerId, b.workerId]).toEqual([0, 1]);
      expect(a.epoch).toBe(1n);
      expect(a.previous).toBeNull();
      const rows = await harness().store.list('free');
      expect(rows.map((r) => [r.workerId, r.holder, r.run, r.epoch])).toEqual([
        [0, 'a:1', 'ra', 1n],
        [1, 'b:1', 'rb', 1n],
      ]);
      expect((await claim('free-other', 'a:1', 'ra')).workerId).toBe(0); // namespaces apart
    });

    it('never takes a live row, not even its own holder’s: full, with the time to the first expiry', async () => {
      await claim('live', 'a:1', 'ra', 5_000, 1);
      await claim('live', 'b:1', 'rb', 5_000, 1);
      const third = await harness().store.claim({
        name: 'live',
        holder: 'c:1',
        run: 'rc',
        leaseMs: 5_000,
        maxWorkerId: 1,
      });
      expect(third).toEqual({ full: true, retryInMs: expect.any(Number) });
      if ('full' in third) expect(third.retryInMs).toBeGreaterThan(3_000);
      const again = await harness().store.claim({
        name: 'live',
        holder: 'a:1',
        run: 'ra2',
        leaseMs: 5_000,
        maxWorkerId: 1,
      });
      expect('full' in again).toBe(true);
    });

    it('claims an expired row with epoch + 1 and its horizon; the deposed holder can neither renew nor release', async () => {
      const old = await claim('expired', 'a:1', 'ra', 300);
      expect(await harness().store.renew(old, 300, 1_700_000_000_123)).toBe(true);
      await harness().elapse(400);
      const successor = await claim('expired', 'b:1', 'rb');
      expect(successor.workerId).toBe(old.workerId);
      expect(successor.epoch).toBe(old.epoch + 1n);
      expect(successor.previous).toMatchObject({
        holder: 'a:1',
        run: 'ra',
        horizon: 1_700_000_000_123,
      });
      expect(await harness().store.renew(old, 60_000, 1_800_000_000_000)).toBe(false);
      expect(await harness().store.release(old, 0)).toBe(false);
      expect((await harness().store.list('expired'))[0]).toMatchObject({
        holder: 'b:1',
        run: 'rb',
        epoch: successor.epoch,
        horizon: 1_700_000_000_123,
      });
    });

    it('prefers the expired row its holder held last', async () => {
      const a = await claim('restart', 'a:1', 'ra', 200);
      const b = await claim('restart', 'b:1', 'rb', 200);
      expect([a.workerId, b.workerId]).toEqual([0, 1]);
      await harness().elapse(300);
      expect((await claim('restart', 'b:1', 'rb2')).workerId).toBe(1);
      expect((await claim('restart', 'a:1', 'ra2')).workerId).toBe(0);
    });

    it('renewing keeps the row live and only raises the horizon', async () => {
      const held = await claim('horizon', 'a:1', 'ra', 300);
      expect(await harness().store.renew(held, 300, 5_000)).toBe(true);
      expect(await harness().store.renew(held, 300, 4_000)).toBe(true);
      expect((await harness().store.list('horizon'))[0]!.horizon).toBe(5_000);
      for (let i = 0; i < 4; i++) {
        await harness().elapse(150);
        expect(await harness().store.renew(held, 300, 6_000 + i)).toBe(true);
      }
      const other = await harness().store.claim({
        name: 'horizon',
        holder: 'b:1',
        run: 'rb',
        leaseMs: 300,
        maxWorkerId: 0,
      });
      expect('full' in other).toBe(true); // renewed past its first expiry: still live
      expect((await harness().store.list('horizon'))[0]!.horizon).toBe(6_003);
    });

    it('release lowers the horizon to what was used and frees the row at once', async () => {
      const held = await claim('release', 'a:1', 'ra', 60_000, 0);
      expect(await harness().store.renew(held, 60_000, 9_000)).toBe(true);
      expect(await harness().store.release(held, 7_000)).toBe(true);
      await harness().elapse(5);
      const next = await claim('release', 'b:1', 'rb', 60_000, 0);
      expect(next).toMatchObject({ workerId: 0, epoch: held.epoch + 1n });
      expect(next.previous?.horizon).toBe(7_000);
    });

    it('concurrent claims get distinct worker IDs', async () => {
      const claims = await Promise.all(
        Array.from({ length: 8 }, (_, i) => claim('race', `h:${i}`, `r${i}`)),
      );
      expect(claims.map((c) => c.workerId).sort((x, y) => x - y)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    });

    it('keeps epochs exact beyond 2^53', async () => {
      await harness().insertRow('big', {
        workerId: 0,
        holder: 'x',
        run: 'rx',
        epoch: 9_007_199_254_740_993n,
        expiresAt: 0,
        horizon: 0,
      });
      expect((await claim('big', 'a:1', 'ra')).epoch).toBe(9_007_199_254_740_994n);
    });

    it('journals each claim that carries an entry (none without): epoch, holder, run, instance, the predecessor’s horizon', async () => {
      const store = harness().store;
      if (!store.claimsOf) return;
      const first = await claim('journal', 'a:1', 'ra', 60_000, 1023, { instance: 'pod-a' });
      expect(first.workerId).toBe(0);
      await store.release(first, 7_000);
      await harness().elapse(5);
      await claim('journal', 'b:1', 'rb'); // not journalled
      const [row] = await store.list('journal');
      await store.release({ name: 'journal', workerId: 0, run: 'rb', epoch: row!.epoch }, 9_000);
      await harness().elapse(5);
      const third = await claim('journal', 'c:1', 'rc', 60_000, 1023, { instance: 'pod-c' });
      expect(third).toMatchObject({ workerId: 0, epoch: 3n });
      const claims = await store.claimsOf('journal', 0);
      expect(claims.map(({ claimedAt: _at, ...rest }) => rest)).toEqual([
        { workerId: 0, epoch: 1n, holder: 'a:1', run: 'ra', instance: 'pod-a', afterMs: null },
        { workerId: 0, epoch: 3n, holder: 'c:1', run: 'rc', instance: 'pod-c', afterMs: 9_000 },
      ]);
      expect(claims[0]!.claimedAt).toBeGreaterThan(1_600_000_000_000);
      expect(await store.claimsOf('journal', 1)).toEqual([]);
      expect(await store.claimsOf('other', 0)).toEqual([]);
    });
  },
);
