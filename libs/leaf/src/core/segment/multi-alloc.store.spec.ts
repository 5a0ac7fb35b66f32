import { AllocationError } from '../errors/allocation.error';
import { InvalidArgumentError } from '../errors/invalid-argument.error';
import { InMemoryAllocStore } from '../../testing/in-memory-alloc.store';
import { FakeClock } from '../../testing/fake-clock';
import { segmentCacheTestOptions } from '../../testing/test-helpers';
import type { AllocatedRange, LeafAllocStore } from './leaf-alloc-store.port';
import { MultiAllocStore } from './multi-alloc.store';
import { SegmentCache } from './segment-cache';

/** Three databases of one tag, classes 0, 1, 2 mod 3. */
function three(step = 30) {
  const dbs = [0, 1, 2].map((r) => new InMemoryAllocStore().setTag('t', step).setClass('t', 3, r));
  return dbs;
}

function multi(stores: LeafAllocStore[], clock = new FakeClock(0), timeoutMs = 50) {
  return new MultiAllocStore(
    stores.map((store, i) => ({ name: `db${i}`, store })),
    { timeoutMs, retryMs: 1000 },
    clock,
  );
}

/** A database that never answers (a frozen server). */
function frozen(): LeafAllocStore {
  const never = () => new Promise<never>(() => undefined);
  return {
    listTags: never,
    listAll: never,
    findTag: never,
    allocate: never,
    handBack: never,
    createTag: never,
    updateTag: never,
  };
}

describe('MultiAllocStore', () => {
  it('takes ranges in turn and tags each with its database and class', async () => {
    const store = multi(three());
    await store.listTags();
    const ranges: AllocatedRange[] = [];
    for (let i = 0; i < 6; i++) ranges.push(await store.allocate('t'));
    expect(ranges.map((r) => r.source)).toEqual([0, 1, 2, 0, 1, 2]);
    expect(ranges.map((r) => r.residue)).toEqual([0, 1, 2, 0, 1, 2]);
    expect(store.status().map((s) => [s.state, s.ranges])).toEqual([
      ['up', 2],
      ['up', 2],
      ['up', 2],
    ]);
    expect(store.problems()).toEqual([]);
  });

  it('skips a failing database, comes back to it after its back-off', async () => {
    const clock = new FakeClock(0);
    const dbs = three();
    const store = multi(dbs, clock);
    dbs[1].failNext(new AllocationError('t', 'connection refused'));
    const sources: Array<number | undefined> = [];
    for (let i = 0; i < 4; i++) sources.push((await store.allocate('t')).source);
    // db1 failed once: its turn went to db2, and it is left out while it waits.
    expect(sources.slice(0, 2)).toEqual([0, 2]);
    expect(sources.slice(2)).not.toContain(1);
    expect(store.status()[1]).toMatchObject({ state: 'down', failures: 1 });
    expect(store.status()[1].lastError).toMatch(/connection refused/);
    clock.advance(1000);
    const after: Array<number | undefined> = [];
    for (let i = 0; i < 3; i++) after.push((await store.allocate('t')).source);
    expect(after).toContain(1);
    expect(store.status()[1].state).toBe('up');
  });

  it('does not wait for a frozen database longer than its timeout', async () => {
    const store = new MultiAllocStore(
      [
        { name: 'frozen', store: frozen() },
        { name: 'ok', store: new InMemoryAllocStore().setTag('t', 10).setClass('t', 2, 1) },
      ],
      { timeoutMs: 20, retryMs: 1000 },
      new FakeClock(0),
    );
    const range = await store.allocate('t');
    expect(range.source).toBe(1);
    expect(store.status()[0]).toMatchObject({ state: 'down' });
    expect(store.status()[0].lastError).toMatch(/did not answer within 20 ms/);
  });

  it('answers with the last error when every database fails', async () => {
    const dbs = three();
    for (const db of dbs) db.failNext(new AllocationError('t', 'down'));
    await expect(multi(dbs).allocate('t')).rejects.toBeInstanceOf(AllocationError);
  });

  it('reports a tag some databases lack, and serves it from those that have it', async () => {
    const dbs = three();
    dbs[2].setTag('only-two', 10).setClass('only-two', 3, 2);
    const store = multi(dbs);
    expect((await store.listTags()).sort()).toEqual(['only-two', 't']);
    expect(store.problems()).toEqual([
      { tag: 'only-two', kind: 'missing', detail: 'no row in db0, db1' },
    ]);
    expect((await store.allocate('only-two')).source).toBe(2);
    expect(store.status().every((s) => s.state === 'up')).toBe(true);
  });

  it('refuses a range whose class shares IDs with another database, and reports the clash', async () => {
    const dbs = three();
    dbs[1].setClass('t', 3, 0); // the operator gave db1 the class of db0
    const store = multi(dbs);
    await store.listTags();
    expect(store.problems().map((p) => p.kind)).toEqual(['clash']);
    const sources: Array<number | undefined> = [];
    for (let i = 0; i < 4; i++) {
      try {
        sources.push((await store.allocate('t')).source);
      } catch (error) {
        expect(error).toBeInstanceOf(AllocationError);
        sources.push(-1);
      }
    }
    // db0 and db1 are refused (never served); db2 still serves.
    expect(sources).not.toContain(0);
    expect(sources).not.toContain(1);
    expect(sources).toContain(2);
  });

  it('hands a tail back to the database that granted it', async () => {
    const dbs = three();
    const store = multi(dbs);
    const range = await store.allocate('t');
    expect(await store.handBack('t', range.maxId, range.maxId - 5n, range.source)).toBe(true);
    expect(dbs[0].maxId('t')).toBe(range.maxId - 5n);
    await expect(store.handBack('t', 1n, 1n)).rejects.toBeInstanceOf(AllocationError);
  });

  it('through SegmentCache: IDs of every class, no duplicate, served while one database is down', async () => {
    const dbs = three(30);
    const store = multi(dbs);
    const cache = new SegmentCache(store, segmentCacheTestOptions(), new FakeClock(0));
    await cache.refreshTags();
    const ids: bigint[] = [];
    for (let i = 0; i < 100; i++) {
      if (i === 40) dbs[1].failNext(new AllocationError('t', 'killed'));
      ids.push(await cache.get('t'));
    }
    expect(new Set(ids).size).toBe(ids.length);
    const residues = new Set(ids.map((id) => id % 3n));
    expect(residues).toEqual(new Set([0n, 1n, 2n]));
    // Within one range the IDs increase by the modulus.
    expect(ids[1] - ids[0]).toBe(3n);
    await expect(cache.getRange('t', 5)).rejects.toBeInstanceOf(InvalidArgumentError);
    expect(cache.readiness(0).databases?.sources).toHaveLength(3);
    expect(cache.snapshot().databases).toHaveLength(3);
    await cache.close();
    const results = await cache.handBack();
    expect(results.every((r) => r.handedBack)).toBe(true);
  });
});

describe('MultiAllocStore and the ID journal', () => {
  const entry = { mode: 'segment', instance: 'pod-a', term: null } as const;

  it('each database journals its own ranges; grantOf answers from the one whose class holds the ID', async () => {
    const dbs = three();
    const store = multi(dbs);
    for (let i = 0; i < 3; i++) await store.allocate('t', undefined, undefined, entry);
    // Every database granted [1, 31): the numbers overlap, the classes do not.
    expect(dbs.map((db) => db.journal.map((g) => [g.start, g.end, g.modulus, g.residue]))).toEqual([
      [[1n, 31n, 3, 0]],
      [[1n, 31n, 3, 1]],
      [[1n, 31n, 3, 2]],
    ]);
    for (const [id, source] of [
      [3n, 'db0'],
      [4n, 'db1'],
      [5n, 'db2'],
      [30n, 'db0'],
    ] as const) {
      expect(await store.grantOf('t', id)).toMatchObject({ source, start: 1n, end: 31n });
    }
    expect(await store.grantOf('t', 31n)).toBeNull();
  });

  it('skips a database that fails, and fails only when none answered', async () => {
    const [one] = three();
    await one!.allocate('t', undefined, undefined, entry);
    const broken = new InMemoryAllocStore();
    broken.grantOf = () => Promise.reject(new AllocationError('t', 'down'));
    expect(await multi([broken, one!]).grantOf('t', 3n)).toMatchObject({ source: 'db1' });
    await expect(multi([broken]).grantOf('t', 3n)).rejects.toBeInstanceOf(AllocationError);
  });
});
