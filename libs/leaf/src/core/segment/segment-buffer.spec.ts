import { AllocationError } from '../errors/allocation.error';
import { SegmentNotReadyError } from '../errors/segment-not-ready.error';
import { TagNotFoundError } from '../errors/tag-not-found.error';
import { FakeClock } from '../../testing/fake-clock';
import { InMemoryAllocStore } from '../../testing/in-memory-alloc.store';
import { SegmentBuffer, type SegmentBufferOptions } from './segment-buffer';

const MIN = 60_000;
const options: SegmentBufferOptions = {
  preloadThreshold: 0.9,
  loadTimeoutMs: 200,
  stepDurationMs: 15 * MIN,
  maxStep: 1_000_000,
  retryBackoffMs: 1000,
};

/** Lets settled promises run their continuations. */
const flush = () => new Promise((resolve) => setImmediate(resolve));

function setup(step = 10, overrides: Partial<SegmentBufferOptions> = {}) {
  const store = new InMemoryAllocStore().setTag('t', step);
  const clock = new FakeClock();
  const buffer = new SegmentBuffer(
    't',
    (tag, s) => store.allocate(tag, s),
    { ...options, ...overrides },
    clock,
  );
  return { store, clock, buffer };
}

describe('SegmentBuffer', () => {
  it('loads its first range on the first request and starts at max_id', async () => {
    const { buffer, store } = setup(100);
    expect(buffer.tryNext()).toBeUndefined();
    expect(buffer.isLoading).toBe(true);
    await expect(buffer.nextAsync()).resolves.toBe(1n);
    expect(buffer.tryNext()).toBe(2n);
    expect(store.calls).toHaveLength(1);
  });

  it('starts the next load once more than 10 % of the segment is used, and only one', async () => {
    const { buffer, store } = setup(10);
    await buffer.warm();
    expect(buffer.tryNext()).toBe(1n); // 9 of 10 remain: not yet
    expect(buffer.isLoading).toBe(false);
    store.hold();
    expect(buffer.tryNext()).toBe(2n); // 8 of 10 remain: below 90 %
    expect(buffer.isLoading).toBe(true);
    for (let i = 0; i < 5; i++) buffer.tryNext();
    expect(store.calls).toHaveLength(2);
    store.release();
    await flush();
    expect(buffer.isLoading).toBe(false);
    expect(buffer.snapshot().next).toMatchObject({ value: '11', max: '21' });
  });

  it('switches to the next segment when the current one is used up', async () => {
    const { buffer } = setup(10);
    const ids = await buffer.take(25);
    expect(ids).toEqual(Array.from({ length: 25 }, (_, i) => BigInt(i + 1)));
  });

  it('lets waiters share the in-flight load instead of starting more', async () => {
    const { buffer, store } = setup(100);
    store.hold();
    const waiters = Array.from({ length: 20 }, () => buffer.nextAsync());
    await flush();
    expect(store.calls).toHaveLength(1);
    store.release();
    const ids = await Promise.all(waiters);
    expect(new Set(ids).size).toBe(20);
    // 20 of 100 used: past the preload mark, so exactly one more load follows.
    expect(store.calls).toHaveLength(2);
  });

  it('gives waiters a typed not-ready error when the load outlasts the timeout', async () => {
    const { buffer, store } = setup(10, { loadTimeoutMs: 30 });
    store.hold();
    await expect(buffer.nextAsync()).rejects.toBeInstanceOf(SegmentNotReadyError);
    store.release();
    await flush();
    // The late range is not lost: the next request is served from it.
    await expect(buffer.nextAsync()).resolves.toBe(1n);
  });

  it('surfaces a failed load, clears the loading state and retries on the next request', async () => {
    const { buffer, store } = setup(10);
    const failure = new AllocationError('t', 'db down');
    store.failNext(failure);
    await expect(buffer.nextAsync()).rejects.toBe(failure);
    expect(buffer.isLoading).toBe(false);
    expect(buffer.snapshot().lastError).toContain('db down');
    await expect(buffer.nextAsync()).resolves.toBe(1n);
    expect(buffer.snapshot().lastError).toBeNull();
  });

  it('never hands out a value at or past max while no range is ready', async () => {
    const { buffer, store } = setup(10);
    await buffer.warm();
    store.hold();
    const ids: bigint[] = [];
    for (let i = 0; i < 15; i++) {
      const id = buffer.tryNext();
      if (id !== undefined) ids.push(id);
    }
    expect(ids).toEqual(Array.from({ length: 10 }, (_, i) => BigInt(i + 1)));
    store.release();
  });

  it('backs off background preloads after a failure but serves requests that need a range', async () => {
    const { buffer, store, clock } = setup(10);
    await buffer.warm();
    store.failNext(new AllocationError('t', 'db down'));
    buffer.tryNext();
    buffer.tryNext(); // triggers the preload, which fails
    await flush();
    expect(store.calls).toHaveLength(2);
    buffer.tryNext(); // within the back-off: no new attempt
    expect(store.calls).toHaveLength(2);
    clock.advance(1000);
    buffer.tryNext();
    expect(store.calls).toHaveLength(3);
  });

  /** Consumes from the buffer until `n` IDs were taken, letting loads finish. */
  async function consume(buffer: SegmentBuffer, n: number): Promise<void> {
    await buffer.take(n);
    await flush();
  }

  it('applies the dynamic step from the third load and starts the segment at newMax - appliedStep', async () => {
    const { buffer, store, clock } = setup(10);
    await consume(buffer, 2); // load 1 (row step) at t0, and its preload: load 2 (row step) at t0
    expect(store.calls.map((c) => c.step)).toEqual([undefined, undefined]);
    clock.advance(MIN);
    await consume(buffer, 10); // into segment 2 past its mark: load 3, 1 minute after load 2 → double
    expect(store.calls.map((c) => c.step)).toEqual([undefined, undefined, 20]);
    const next = buffer.snapshot().next!;
    // max_id was 21 before load 3 and 41 after: the segment is [21, 41), not [31, 41).
    expect(next).toMatchObject({ value: '21', max: '41', step: 20 });
    expect(buffer.snapshot().step).toBe(20);
  });

  it('keeps the step between 15 and 30 minutes and halves it after, never below the row step', async () => {
    const { buffer, store, clock } = setup(10);
    await consume(buffer, 2); // loads 1 and 2 at t0
    clock.advance(MIN);
    await consume(buffer, 10); // load 3: 20
    clock.advance(20 * MIN);
    await consume(buffer, 8 + 20); // finish segment 2, pass the mark of segment 3 (20 long): load 4 keeps 20
    clock.advance(45 * MIN);
    await consume(buffer, 20); // pass the mark of segment 4: load 5 halves to 10
    expect(store.calls.map((c) => c.step)).toEqual([undefined, undefined, 20, 20, 10]);
    clock.advance(60 * MIN);
    await consume(buffer, 20);
    // Load 6 comes an hour after load 5: halving 10 would go below the row step, so 10 stays.
    expect(store.calls[5].step).toBe(10);
  });

  it('drops a load that finishes after dispose and answers TagNotFound', async () => {
    const { buffer, store } = setup(10);
    store.hold();
    const pending = buffer.nextAsync();
    buffer.dispose();
    store.release();
    await expect(pending).rejects.toBeInstanceOf(TagNotFoundError);
    expect(() => buffer.tryNext()).toThrow(TagNotFoundError);
    expect(buffer.snapshot().current).toBeNull();
  });

  it('starts the next load when a slice ends exactly at the end of the segment', async () => {
    const { buffer, store } = setup(10);
    await buffer.warm();
    store.hold();
    expect(buffer.trySlice(10)).toEqual({ start: 1n, end: 11n });
    expect(buffer.isLoading).toBe(true);
    expect(store.calls).toHaveLength(2);
    store.release();
    await flush();
    expect(buffer.tryNext()).toBe(11n);
  });

  it('cuts contiguous slices only from the current segment', async () => {
    const { buffer } = setup(10);
    await buffer.warm();
    expect(buffer.trySlice(4)).toEqual({ start: 1n, end: 5n });
    expect(buffer.trySlice(7)).toBeUndefined();
    expect(buffer.tryNext()).toBe(5n);
  });

  it('serves a strided range (residue 1 of 3) on the slow path: its class only, preloading past the mark', async () => {
    const store = new InMemoryAllocStore().setTag('t', 30).setClass('t', 3, 1);
    const buffer = new SegmentBuffer(
      't',
      (tag, s) => store.allocate(tag, s),
      options,
      new FakeClock(),
    );
    await buffer.warm(); // [1, 31): 1, 4, ..., 28 (10 IDs)
    const ids: bigint[] = [buffer.nextSync()];
    expect(store.calls).toHaveLength(1); // 10 % of the step is used only past ID 4
    ids.push(buffer.nextSync(), buffer.nextSync());
    expect(ids).toEqual([1n, 4n, 7n]);
    expect(store.calls).toHaveLength(2); // the preload, once
    await flush();
    expect(buffer.idle).toBe(7 + 10);
    while (ids.length < 10) ids.push(buffer.nextSync());
    expect(ids.slice(-1)).toEqual([28n]);
    expect(store.calls).toHaveLength(2);
    expect(buffer.nextSync()).toBe(31n); // the next range [31, 61) in the class: 31 ≡ 1
    expect(buffer.issued).toBe(11);
  });
});
