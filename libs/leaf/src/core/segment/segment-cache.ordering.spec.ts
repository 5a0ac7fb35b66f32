import { InMemoryAllocStore } from '../../testing/in-memory-alloc.store';
import { FakeClock } from '../../testing/fake-clock';
import { segmentCacheTestOptions } from '../../testing/test-helpers';
import { InvalidArgumentError } from '../errors/invalid-argument.error';
import { SegmentCache } from './segment-cache';

/**
 * The ordering guarantee (docs/design.md, "Ordering"): per instance and per tag, every ID or
 * range handed out is greater than everything handed out before, across get, getIds and
 * getRange, in the order the instance hands them out.
 */
async function setup(step: number, overrides = {}) {
  const store = new InMemoryAllocStore().setTag('t', step);
  const cache = new SegmentCache(
    store,
    segmentCacheTestOptions({ maxRangeCount: 100_000, ...overrides }),
    new FakeClock(0),
  );
  await cache.refreshTags();
  return { store, cache };
}

/** Records every answer as [low, high) in the order the cache produced it. */
class Issued {
  readonly spans: Array<[bigint, bigint]> = [];
  add(low: bigint, high: bigint = low + 1n): void {
    this.spans.push([low, high]);
  }
  expectIncreasing(): void {
    for (let i = 1; i < this.spans.length; i++) {
      expect(this.spans[i][0]).toBeGreaterThanOrEqual(this.spans[i - 1][1]);
    }
  }
}

describe('SegmentCache: ordering across get, getIds and getRange', () => {
  it('a range that does not fit takes a fresh allocation; later single IDs come above it', async () => {
    const { store, cache } = await setup(100);
    expect(await cache.getIds('t', 95)).toHaveLength(95);
    // 5 left in [1, 101), and the preloaded [101, 201) is too small too: the range comes
    // from a fresh [201, 501) (max(step, count) = 300); 96..200 are a gap.
    expect(await cache.getRange('t', 300)).toEqual({ start: 201n, end: 501n });
    expect(await cache.get('t')).toBeGreaterThanOrEqual(501n);
    expect(store.calls.map((c) => c.step).slice(0, 3)).toEqual([undefined, undefined, 300]);
    await cache.close();
  });

  it('a range smaller than the step leaves the rest of the fresh allocation as the buffer', async () => {
    const { cache } = await setup(100);
    await cache.getIds('t', 98);
    expect(await cache.getRange('t', 10)).toEqual({ start: 101n, end: 111n });
    // The old segment's last IDs (99, 100) are a gap, never issued after the range.
    expect(await cache.getIds('t', 3)).toEqual([111n, 112n, 113n]);
    await cache.close();
  });

  it('a loaded next segment serves a range that does not fit the current one', async () => {
    const { store, cache } = await setup(100);
    await cache.getIds('t', 95); // past the preload mark: [101, 201) is loaded as next
    await new Promise((resolve) => setImmediate(resolve));
    expect(await cache.getRange('t', 50)).toEqual({ start: 101n, end: 151n });
    expect(await cache.get('t')).toBe(151n);
    // No allocation for the range: the third one is the preload of the segment after.
    expect(store.calls.map((c) => c.step)).not.toContain(50);
    await cache.close();
  });

  it('waits for a load in flight before allocating a range, so allocations stay in order', async () => {
    const { store, cache } = await setup(100);
    await cache.getIds('t', 95);
    store.hold(); // the preload of the next segment is now held in flight
    await cache.getIds('t', 1);
    const range = cache.getRange('t', 500);
    const single = cache.getIds('t', 10); // 4 left, then waits
    store.release();
    const [r, ids] = await Promise.all([range, single]);
    // The batch was served while the range's allocation was in flight: all of it below.
    for (const id of ids) expect(id).toBeLessThan(r.start);
    expect(await cache.get('t')).toBeGreaterThanOrEqual(r.end);
    // The range's allocation was sent after the held preload, not next to it.
    expect(store.calls.map((c) => c.step).slice(0, 3)).toEqual([undefined, undefined, 500]);
    await cache.close();
  });

  it('keeps the order under a random mix of concurrent calls', async () => {
    const { cache } = await setup(50);
    const issued = new Issued();
    let seed = 7;
    const random = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    const calls: Promise<void>[] = [];
    for (let i = 0; i < 400; i++) {
      const kind = random(3);
      if (kind === 0) {
        calls.push(cache.get('t').then((id) => issued.add(id)));
      } else if (kind === 1) {
        calls.push(
          cache.getIds('t', 1 + random(40)).then((ids) => ids.forEach((id) => issued.add(id))),
        );
      } else {
        calls.push(cache.getRange('t', 1 + random(120)).then((r) => issued.add(r.start, r.end)));
      }
      if (random(4) === 0) await new Promise((resolve) => setImmediate(resolve));
    }
    await Promise.all(calls);
    expect(issued.spans.length).toBeGreaterThan(400);
    issued.expectIncreasing();
    await cache.close();
  });

  it('with `after`, a range starts there or above, from a fresh allocation if needed', async () => {
    const { store, cache } = await setup(100);
    await cache.get('t');
    expect(await cache.getRange('t', 5, 2n)).toEqual({ start: 2n, end: 7n });
    store.setTag('t', 100, 5000n); // another instance allocated up to 5000
    expect(await cache.getRange('t', 5, 4000n)).toEqual({ start: 5000n, end: 5005n });
    expect(await cache.get('t')).toBe(5005n);
    // An `after` above every ID issued is refused (the allocation it cost is a gap).
    await expect(cache.getRange('t', 5, 1_000_000n)).rejects.toBeInstanceOf(InvalidArgumentError);
    expect(await cache.get('t')).toBeGreaterThan(5005n);
    await cache.close();
  });

  it('caps range counts at maxRangeCount, separately from maxBatchSize', async () => {
    const { cache } = await setup(100, { maxBatchSize: 10, maxRangeCount: 1000 });
    await expect(cache.getRange('t', 1000)).resolves.toEqual({ start: 1n, end: 1001n });
    await expect(cache.getRange('t', 1001)).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(cache.getIds('t', 11)).rejects.toBeInstanceOf(InvalidArgumentError);
    await cache.close();
  });
});
