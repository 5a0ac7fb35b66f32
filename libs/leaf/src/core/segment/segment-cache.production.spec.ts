import { AllocationError } from '../errors/allocation.error';
import { ShuttingDownError } from '../errors/shutting-down.error';
import { FakeClock } from '../../testing/fake-clock';
import { InMemoryAllocStore } from '../../testing/in-memory-alloc.store';
import { SegmentCache } from './segment-cache';
import { segmentCacheTestOptions } from '../../testing/test-helpers';

const options = segmentCacheTestOptions();

const flush = () => new Promise((resolve) => setImmediate(resolve));

async function setup(step = 100) {
  const store = new InMemoryAllocStore().setTag('t', step);
  const clock = new FakeClock(0);
  const events: string[] = [];
  const cache = new SegmentCache(store, options, clock, {
    loadFailed: (tag, error) => events.push(`failed ${tag}: ${(error as Error).message}`),
    loadRecovered: (tag, failures) => events.push(`recovered ${tag} after ${failures}`),
    rangeRefused: (error) => events.push(`refused ${error.tag} [${error.start}, ${error.end})`),
  });
  await cache.refreshTags();
  return { store, clock, cache, events };
}

describe('SegmentCache: hand-back at a graceful stop', () => {
  it('hands back the rest of the current segment once closed; the next range starts there', async () => {
    const { store, cache } = await setup(100);
    expect(await cache.getIds('t', 5)).toEqual([1n, 2n, 3n, 4n, 5n]);
    await cache.close();
    expect(await cache.handBack()).toEqual([
      { tag: 't', maxId: 101n, firstUnused: 6n, handedBack: true },
    ]);
    expect(store.maxId('t')).toBe(6n);
    expect((await store.allocate('t')).maxId).toBe(106n);
    // Only once.
    expect(await cache.handBack()).toEqual([]);
  });

  it('includes the loaded next segment, and the current rest only when contiguous', async () => {
    const { store, cache } = await setup(10);
    await cache.getIds('t', 3); // past the mark: [11, 21) loads
    await flush();
    expect(cache.snapshot().buffers[0].next).toMatchObject({ value: '11', max: '21' });
    await cache.close();
    await cache.handBack();
    expect(store.maxId('t')).toBe(4n);

    // Another instance allocated between our two ranges: only the next segment goes back.
    const gap = await setup(10);
    await gap.cache.getIds('t', 1); // [1, 11)
    await gap.store.allocate('t'); // another instance: [11, 21)
    await gap.cache.getIds('t', 2); // past the mark: [21, 31) loads
    await flush();
    await gap.cache.close();
    expect(await gap.cache.handBack()).toEqual([
      { tag: 't', maxId: 31n, firstUnused: 21n, handedBack: true },
    ]);
    expect(gap.store.maxId('t')).toBe(21n);
  });

  it('changes nothing when another instance allocated after us', async () => {
    const { store, cache } = await setup(100);
    await cache.getIds('t', 5);
    await store.allocate('t'); // another instance: [101, 201)
    await cache.close();
    const [result] = await cache.handBack();
    expect(result).toMatchObject({ maxId: 101n, firstUnused: 6n, handedBack: false });
    expect(store.maxId('t')).toBe(201n);
  });

  it('refuses before close, and stops every handle from issuing once closed', async () => {
    const { cache } = await setup(100);
    const handle = cache.generator('t');
    await handle.nextAsync();
    await expect(cache.handBack()).rejects.toThrow(/only after close/);
    await cache.close();
    expect(() => handle.next()).toThrow(ShuttingDownError);
    await expect(handle.nextAsync()).rejects.toBeInstanceOf(ShuttingDownError);
  });

  it('never hands back a range given to a caller', async () => {
    const { store, cache } = await setup(100);
    await cache.getIds('t', 2);
    // More than the segment has left: allocated directly, [101, 251), the caller's.
    expect(await cache.getRange('t', 150)).toEqual({ start: 101n, end: 251n });
    await cache.close();
    const [result] = await cache.handBack();
    expect(result).toMatchObject({ maxId: 101n, firstUnused: 3n, handedBack: false });
    expect(store.maxId('t')).toBe(251n);
  });

  it('reports a failed hand-back without throwing', async () => {
    const { store, cache } = await setup(100);
    await cache.getIds('t', 1);
    await cache.close();
    jest.spyOn(store, 'handBack').mockRejectedValueOnce(new AllocationError('t', 'down'));
    const [result] = await cache.handBack();
    expect(result.handedBack).toBe(false);
    expect(result.error).toBeInstanceOf(AllocationError);
  });
});

describe('SegmentCache: readiness that leads', () => {
  it('measures the runway from the issue rate, and is down only while allocations fail and the runway is short', async () => {
    const { store, clock, cache, events } = await setup(10_000);
    await cache.warm(['t']);
    cache.sampleRates();
    for (let second = 0; second < 5; second++) {
      clock.advance(1000);
      await cache.getIds('t', 50); // 50 IDs/s
      cache.sampleRates();
    }
    const [runway] = cache.runways();
    expect(runway.ratePerSecond).toBeGreaterThan(20);
    expect(runway.runwayMs).toBeGreaterThan(0);
    expect(cache.readiness(3_600_000)).toMatchObject({ ready: true, allocationFailing: false });

    // The database fails: the preload past the mark fails once per streak in the log.
    store.failNext(new AllocationError('t', 'connection refused'));
    store.failNext(new AllocationError('t', 'connection refused'));
    clock.advance(1000);
    await cache.getIds('t', 1000); // past the preload mark
    await flush();
    expect(cache.readiness(3_600_000)).toMatchObject({
      ready: false,
      allocationFailing: true,
      reason: expect.stringMatching(
        /allocations failing .*connection refused.*runway below 3600000 ms: t/,
      ),
    });
    // A short threshold: IDs last longer than it, still ready; 0 turns the rule off.
    expect(cache.readiness(1).ready).toBe(true);
    expect(cache.readiness(0).ready).toBe(true);
    // IDs are still served.
    expect(cache.getSync('t')).toBeGreaterThan(0n);
    clock.advance(1500); // past the back-off: the retry fails again, not logged again
    await cache.getIds('t', 10);
    await flush();
    expect(events).toEqual(['failed t: connection refused']);

    clock.advance(1500); // the database is back
    await cache.getIds('t', 10);
    await flush();
    expect(events).toEqual(['failed t: connection refused', 'recovered t after 2']);
    expect(cache.readiness(3_600_000)).toMatchObject({ ready: true, allocationFailing: false });
  });

  it('a tag nobody asks for has no runway limit; before the tag list and once closing it is down', async () => {
    const store = new InMemoryAllocStore().setTag('idle', 10);
    const cache = new SegmentCache(store, options, new FakeClock(0));
    expect(cache.readiness(1000)).toMatchObject({ ready: false, reason: 'tag list not loaded' });
    await cache.refreshTags();
    expect(cache.runways()).toEqual([
      { tag: 'idle', idle: 0, ratePerSecond: 0, runwayMs: null, failures: 0 },
    ]);
    expect(cache.readiness(1000).ready).toBe(true);
    await cache.close();
    expect(cache.readiness(1000)).toMatchObject({ ready: false, reason: 'shutting down' });
  });
});

describe('SegmentCache: max_id lowered under it (an old backup restored)', () => {
  it('refuses every range not above what it holds, alerts each time, never serves an ID twice', async () => {
    const { store, cache, events } = await setup(100);
    const served = await cache.getIds('t', 95); // [1, 101); past the mark: [101, 201) loads
    await flush();
    expect(store.maxId('t')).toBe(201n);
    store.setTag('t', 100, 51n); // lowered by 150 by hand

    const errors: unknown[] = [];
    for (let attempt = 0; attempt < 10 && served.length < 400; attempt++) {
      try {
        served.push(...(await cache.getIds('t', 50)));
      } catch (error) {
        errors.push(error);
      }
    }
    expect(new Set(served).size).toBe(served.length);
    expect(served.length).toBeGreaterThanOrEqual(400);
    // The dynamic step doubles (segments used up within 15 minutes): [51, 251) was
    // committed to this instance but overlaps [1, 201): refused; [251, 651) is above.
    expect(events.filter((e) => e.startsWith('refused'))).toEqual(['refused t [51, 251)']);
    // The refusal came from the background preload: callers were served from [101, 201)
    // meanwhile, and the load they then waited for was above.
    expect(errors).toEqual([]);
    expect(served.filter((id) => id >= 201n && id < 251n)).toEqual([]);
    // After 200 (the end of what it held), the first range above: 251 on.
    expect(served.find((id) => id > 200n)).toBe(251n);
  });
});
