import { InMemoryGaplessStore } from '../../testing/in-memory-gapless.store';
import {
  GaplessBusyError,
  GaplessKeyMismatchError,
  GaplessNotReservedError,
  GaplessReservationExpiredError,
  GaplessSeriesNotFoundError,
  GaplessSettledError,
} from '../errors/gapless.error';
import { NumberOverflowError } from '../errors/number-format.error';
import type { GaplessNumber, GaplessOp } from './gapless-batch';
import { GaplessGroupCommit } from './gapless-group-commit';
import { checkNewGaplessSeries, type NewGaplessSeries } from './gapless-series';
import { verifyGaplessSeries } from './gapless-verify';

async function setUp(series: Partial<NewGaplessSeries> = {}, maxBatch = 100) {
  let now = Date.UTC(2026, 11, 31, 23, 0);
  const store = new InMemoryGaplessStore(() => now);
  await store.createSeries(checkNewGaplessSeries({ name: 'inv', prefix: 'INV', ...series }));
  const transactions: number[] = [];
  const withLock = store.withLock.bind(store);
  store.withLock = (name, work) =>
    withLock(name, (lock) => {
      transactions.push(0);
      return work(lock);
    });
  const commit = new GaplessGroupCommit(store, maxBatch);
  const ask = (op: GaplessOp) => commit.submit('inv', op) as Promise<GaplessNumber>;
  return {
    store,
    commit,
    ask,
    transactions,
    reserve: (key: string, ttlMs = 60_000) => ask({ kind: 'reserve', key, ttlMs }),
    advance: (ms: number) => (now += ms),
  };
}

describe('GaplessGroupCommit with applyGaplessBatch', () => {
  it('keeps the requests of an early transaction whose lock wait ran out behind a slow commit of its own', async () => {
    const { store, reserve } = await setUp();
    const withLock = store.withLock.bind(store);
    let holding = false;
    let release!: () => void;
    const slow = new Promise<void>((resolve) => (release = resolve));
    let refused = 0;
    store.withLock = (name, work) => {
      if (holding) {
        // The lock wait running out (after a while) while the first transaction commits.
        refused++;
        return new Promise((_, reject) =>
          setTimeout(() => reject(new GaplessBusyError(name, 5)), 5),
        );
      }
      holding = true;
      // The batch taken, then a slow commit.
      return withLock(name, async (lock) => {
        const result = await work(lock);
        await slow;
        return result;
      }).finally(() => (holding = false));
    };
    const first = reserve('a');
    await new Promise((resolve) => setTimeout(resolve, 1));
    const second = reserve('b');
    await new Promise((resolve) => setTimeout(resolve, 30));
    release();
    expect([(await first).number, (await second).number]).toEqual([1n, 2n]);
    expect(refused).toBeGreaterThan(0);
  });

  it('answers the requests of one turn with consecutive numbers from one transaction', async () => {
    const { reserve, transactions } = await setUp();
    const numbers = await Promise.all(['a', 'b', 'c', 'd'].map((key) => reserve(key)));
    expect(numbers.map((n) => [n.number, n.text, n.state])).toEqual([
      [1n, 'INV-000001', 'reserved'],
      [2n, 'INV-000002', 'reserved'],
      [3n, 'INV-000003', 'reserved'],
      [4n, 'INV-000004', 'reserved'],
    ]);
    expect(transactions).toHaveLength(1);
  });

  it('splits a turn into batches of maxBatch, in order', async () => {
    const { reserve, transactions } = await setUp({}, 2);
    const numbers = await Promise.all(['a', 'b', 'c', 'd', 'e'].map((key) => reserve(key)));
    expect(numbers.map((n) => n.number)).toEqual([1n, 2n, 3n, 4n, 5n]);
    expect(transactions).toHaveLength(3);
  });

  it('answers a key with its first number: twice in one batch, later, and after confirmation', async () => {
    const { reserve, ask } = await setUp();
    const [first, again] = await Promise.all([reserve('a'), reserve('a'), reserve('b')]);
    expect([first.number, again.number]).toEqual([1n, 1n]);
    expect((await reserve('a')).number).toBe(1n);
    await ask({ kind: 'confirm', key: 'a', number: 1n });
    expect(await reserve('a')).toMatchObject({ number: 1n, state: 'confirmed' });
    expect((await reserve('c')).number).toBe(3n);
  });

  it('confirms and voids once; a repeat is answered as settled; the other way is refused', async () => {
    const { reserve, ask } = await setUp();
    await reserve('a');
    await reserve('b');
    expect(await ask({ kind: 'confirm', key: 'a', number: 1n })).toMatchObject({
      state: 'confirmed',
    });
    expect(await ask({ kind: 'confirm', key: 'a', number: 1n })).toMatchObject({
      state: 'confirmed',
    });
    expect(await ask({ kind: 'void', key: 'b', number: 2n, reason: 'cancelled' })).toMatchObject({
      state: 'voided',
      reason: 'cancelled',
    });
    await expect(ask({ kind: 'void', key: 'a', number: 1n, reason: 'x' })).rejects.toBeInstanceOf(
      GaplessSettledError,
    );
    await expect(ask({ kind: 'confirm', key: 'b', number: 2n })).rejects.toBeInstanceOf(
      GaplessSettledError,
    );
    await expect(reserve('b')).rejects.toBeInstanceOf(GaplessSettledError);
    await expect(ask({ kind: 'confirm', key: 'a', number: 2n })).rejects.toBeInstanceOf(
      GaplessKeyMismatchError,
    );
    await expect(ask({ kind: 'confirm', key: 'zz', number: 1n })).rejects.toBeInstanceOf(
      GaplessNotReservedError,
    );
  });

  it('voids a reservation past its TTL on the store’s clock, at confirm or by the sweep', async () => {
    const { reserve, ask, advance, store } = await setUp();
    await reserve('a', 1000);
    await reserve('b', 1000);
    await reserve('c', 5000);
    advance(1000);
    await expect(ask({ kind: 'confirm', key: 'a', number: 1n })).rejects.toBeInstanceOf(
      GaplessReservationExpiredError,
    );
    await expect(reserve('a')).rejects.toBeInstanceOf(GaplessReservationExpiredError);
    expect(await store.hasExpired('inv')).toBe(true);
    expect(await ask({ kind: 'sweep', limit: 100 })).toBe(1);
    expect(await store.hasExpired('inv')).toBe(false);
    const report = await verifyGaplessSeries(store, 'inv');
    expect(report).toMatchObject({ issued: 3, voided: 2, pending: 1, records: 2, ok: true });
    const [, b] = await store.readNumbers('inv', null, 10);
    expect(b).toMatchObject({ state: 'voided', reason: 'expired' });
  });

  it('take (in-transaction) confirms at once, and a document key answers its first number', async () => {
    const { ask, reserve } = await setUp();
    expect(await ask({ kind: 'take', key: 'doc-1' })).toMatchObject({
      number: 1n,
      state: 'confirmed',
    });
    expect(await ask({ kind: 'take', key: null })).toMatchObject({ number: 2n });
    expect(await ask({ kind: 'take', key: 'doc-1' })).toMatchObject({ number: 1n });
    expect(await reserve('doc-1')).toMatchObject({ number: 1n, state: 'confirmed' });
  });

  it('restarts the counter each period of the series’ calendar', async () => {
    const { reserve, advance } = await setUp({ period: 'year' });
    expect(await reserve('a')).toMatchObject({ periodKey: '2026', text: 'INV-2026-000001' });
    advance(3_600_000);
    expect(await reserve('b')).toMatchObject({ periodKey: '2027', number: 1n });
  });

  it('refuses a number wider than the series, and an unknown series, taking nothing', async () => {
    const { reserve, commit } = await setUp({ width: 1 });
    for (let i = 1; i <= 9; i++) await reserve(`k${i}`);
    await expect(reserve('k10')).rejects.toBeInstanceOf(NumberOverflowError);
    await expect(
      commit.submit('nope', { kind: 'reserve', key: 'a', ttlMs: 1 }),
    ).rejects.toBeInstanceOf(GaplessSeriesNotFoundError);
  });

  it('queues the next transaction for the lock while one commits: the requests that arrive meanwhile go in it, together', async () => {
    const { reserve, store, transactions } = await setUp();
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const withLock = store.withLock.bind(store);
    let asked = 0;
    store.withLock = (name, work) => {
      const first = ++asked === 1;
      return withLock(name, async (lock) => {
        const result = await work(lock);
        if (first) await held; // the first transaction commits slowly
        return result;
      });
    };
    const a = reserve('a');
    await new Promise((resolve) => setImmediate(resolve));
    const later = [reserve('b')];
    await new Promise((resolve) => setImmediate(resolve));
    later.push(reserve('c'));
    await new Promise((resolve) => setImmediate(resolve));
    expect(asked).toBe(2); // one committing, one waiting for the lock: not one per request
    release();
    expect((await a).number).toBe(1n);
    expect((await Promise.all(later)).map((n) => n.number)).toEqual([2n, 3n]);
    expect(transactions).toHaveLength(2);
  });

  it('a failed transaction answers every request of its batch with the error and leaves nothing', async () => {
    const { reserve, store } = await setUp();
    await reserve('a');
    const withLock = store.withLock.bind(store);
    store.withLock = (name, work) =>
      withLock(name, async (lock) => {
        await work(lock);
        throw new Error('commit lost');
      });
    const failed = await Promise.allSettled([reserve('b'), reserve('c')]);
    expect(failed.map((result) => result.status)).toEqual(['rejected', 'rejected']);
    expect(await store.readCounters('inv')).toEqual([{ periodKey: '', last: 1n }]);
  });
});
