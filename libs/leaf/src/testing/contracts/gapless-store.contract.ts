import {
  GaplessSeriesExistsError,
  GaplessSeriesNotFoundError,
} from '../../core/errors/gapless.error';
import type { GaplessNumber } from '../../core/gapless/gapless-batch';
import { GaplessGroupCommit } from '../../core/gapless/gapless-group-commit';
import { checkNewGaplessSeries } from '../../core/gapless/gapless-series';
import type { GaplessStore } from '../../core/gapless/gapless-store.port';
import { verifyGaplessSeries } from '../../core/gapless/gapless-verify';
import { defineContract } from './contract-runner';

/** What {@link gaplessStoreContract} needs of one implementation. */
export interface GaplessStoreHarness {
  /** A store on empty gapless tables. */
  readonly store: GaplessStore;
  /** A second store on the same tables (another instance), or the same one. */
  readonly other: GaplessStore;
  close(): Promise<void>;
}

/**
 * The contract of a {@link GaplessStore} (docs/design.md, "Gapless numbers"): a series is created
 * once; the lock of a series serialises its transactions across stores, so numbers taken by
 * several instances at once are consecutive and distinct; a transaction whose work fails
 * leaves nothing; settlements are chained; expiry is read on the store's clock; the
 * snapshot reads page in order.
 */
export const gaplessStoreContract = defineContract<GaplessStoreHarness>(
  'GaplessStore',
  (harness, runner) => {
    const { it, expect } = runner;
    const reserve = (commit: GaplessGroupCommit, series: string, key: string, ttlMs = 60_000) =>
      commit.submit(series, { kind: 'reserve', key, ttlMs }) as Promise<GaplessNumber>;

    it('creates a series once, as given, and lists series by name', async () => {
      const series = checkNewGaplessSeries({
        name: 'pt-ft',
        prefix: 'FT A',
        width: 8,
        period: 'year',
        timeZone: 'Europe/Lisbon',
        externalCode: 'AAJFJMVNTN',
      });
      const created = await harness().store.createSeries(series);
      expect(created).toEqual({ ...series, createdAt: expect.any(Number) as number });
      expect(Math.abs(created.createdAt - Date.now())).toBeLessThan(600_000);
      await harness().store.createSeries(
        checkNewGaplessSeries({ name: 'es-r', correctionsOf: 'pt-ft' }),
      );
      await expect(harness().other.createSeries(series)).rejects.toBeInstanceOf(
        GaplessSeriesExistsError,
      );
      expect((await harness().other.listSeries()).map((s) => s.name)).toEqual(['es-r', 'pt-ft']);
      expect(await harness().other.findSeries('pt-ft')).toEqual(created);
      expect(await harness().store.findSeries('nope')).toBeNull();
      await expect(
        harness().store.withLock('nope', () => Promise.resolve()),
      ).rejects.toBeInstanceOf(GaplessSeriesNotFoundError);
    });

    it('serialises the transactions of two stores: consecutive distinct numbers, settled and chained', async () => {
      await harness().store.createSeries(checkNewGaplessSeries({ name: 'two', prefix: 'T' }));
      const one = new GaplessGroupCommit(harness().store, 50);
      const two = new GaplessGroupCommit(harness().other, 50);
      const taken = await Promise.all(
        Array.from({ length: 120 }, (_, i) => reserve(i % 2 ? one : two, 'two', `k${i}`)),
      );
      const numbers = taken.map((n) => n.number).sort((a, b) => (a < b ? -1 : 1));
      expect(numbers).toEqual(Array.from({ length: 120 }, (_, i) => BigInt(i + 1)));
      expect((await reserve(two, 'two', 'k7')).number).toBe(taken[7]!.number);
      await Promise.all(
        taken.map((n, i) =>
          i % 3 === 0
            ? one.submit('two', { kind: 'void', key: n.key!, number: n.number, reason: `r${i}` })
            : two.submit('two', { kind: 'confirm', key: n.key!, number: n.number }),
        ),
      );
      expect(await reserve(one, 'two', 'k8')).toMatchObject({ state: 'confirmed' });
      expect(await verifyGaplessSeries(harness().other, 'two')).toMatchObject({
        issued: 120,
        confirmed: 80,
        voided: 40,
        pending: 0,
        records: 120,
        ok: true,
      });
    });

    it('keeps a reason as given, quotes and backslashes included, and chains it', async () => {
      await harness().store.createSeries(checkNewGaplessSeries({ name: 'reason' }));
      const commit = new GaplessGroupCommit(harness().store, 10);
      const reason = `l'avoir n° 7 \\ "annulé" \\' ; -- ?1 $1 E'x'`;
      const { number } = await reserve(commit, 'reason', 'a');
      await commit.submit('reason', { kind: 'void', key: 'a', number, reason });
      const [row] = await harness().other.snapshot((view) => view.readNumbers('reason', null, 10));
      const [record] = await harness().other.snapshot((view) => view.readRecords('reason', 0n, 10));
      expect([row!.reason, record!.reason]).toEqual([reason, reason]);
      expect(await verifyGaplessSeries(harness().other, 'reason')).toMatchObject({ ok: true });
    });

    it('leaves nothing of a transaction whose work failed', async () => {
      await harness().store.createSeries(checkNewGaplessSeries({ name: 'rollback' }));
      const commit = new GaplessGroupCommit(harness().store, 10);
      await reserve(commit, 'rollback', 'a');
      const failing: GaplessStore = Object.create(harness().store) as GaplessStore;
      failing.withLock = (series, work) =>
        harness().store.withLock(series, async (lock) => {
          await work(lock);
          throw new Error('the work failed after its writes');
        });
      await expect(reserve(new GaplessGroupCommit(failing, 10), 'rollback', 'b')).rejects.toThrow(
        'the work failed',
      );
      expect(await harness().other.snapshot((view) => view.readCounters('rollback'))).toEqual([
        { periodKey: '', last: 1n },
      ]);
      expect((await reserve(commit, 'rollback', 'b')).number).toBe(2n);
    });

    it('expires reservations on its own clock; the sweep voids them with the reason', async () => {
      await harness().store.createSeries(checkNewGaplessSeries({ name: 'ttl' }));
      const commit = new GaplessGroupCommit(harness().store, 10);
      await reserve(commit, 'ttl', 'short', 0);
      await reserve(commit, 'ttl', 'long', 3_600_000);
      expect(await harness().other.hasExpired('ttl')).toBe(true);
      expect(await commit.submit('ttl', { kind: 'sweep', limit: 100 })).toBe(1);
      expect(await harness().other.hasExpired('ttl')).toBe(false);
      const rows = await harness().other.snapshot((view) => view.readNumbers('ttl', null, 10));
      expect(rows.map((row) => [row.number, row.state, row.reason])).toEqual([
        [1n, 'voided', 'expired'],
        [2n, 'reserved', null],
      ]);
      const page = await harness().other.snapshot((view) =>
        view.readNumbers('ttl', { periodKey: '', number: 1n }, 10),
      );
      expect(page.map((row) => row.number)).toEqual([2n]);
      const [record] = await harness().other.snapshot((view) => view.readRecords('ttl', 0n, 10));
      expect(record).toMatchObject({ seq: 1n, number: 1n, action: 'void', reason: 'expired' });
    });
  },
);
