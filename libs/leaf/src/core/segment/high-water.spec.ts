import { HighWaterUnavailableError } from '../errors/allocation.error';
import {
  HIGH_WATER_ATTEMPTS,
  HighWaterConflict,
  HighWaterFence,
  withHighWaterRetry,
} from './high-water';
import { RecordingHighWaterStore } from './recording-high-water.store';
import { InMemoryHighWaterStore } from '../../testing/in-memory-high-water.store';

/** Marks in a Map, with ZooKeeper's versioned compare-and-set. */
const MapMarks = InMemoryHighWaterStore;

describe('HighWaterFence', () => {
  it('starts a range at max_id while max_id is at or above the mark, and raises the mark to its end', async () => {
    const marks = new MapMarks();
    const fence = new HighWaterFence(marks);
    const plan = await fence.plan('t', 1n);
    expect(plan).toMatchObject({ base: 1n, repair: null, mark: null });
    await fence.publish(plan, 1001n);
    fence.committed('t', 1001n);
    expect(marks.marks.get('t')?.value).toBe(1001n);
    expect(await fence.plan('t', 1001n)).toMatchObject({ base: 1001n, repair: null });
  });

  it('a max_id below the mark is a regression: the range starts at the mark', async () => {
    const marks = new MapMarks();
    marks.marks.set('t', { value: 9001n, version: 4 });
    const plan = await new HighWaterFence(marks).plan('t', 4001n);
    expect(plan).toMatchObject({
      base: 9001n,
      repair: { maxId: 4001n, highWater: 9001n, kind: 'regression' },
    });
  });

  it('a mark this instance wrote for a commit that failed is told apart from a regression', async () => {
    const marks = new MapMarks();
    const fence = new HighWaterFence(marks);
    await fence.publish(await fence.plan('t', 1n), 1001n);
    // An earlier allocation's COMMIT confirmed after this one published: this one stays.
    fence.committed('t', 1n);
    expect((await fence.plan('t', 1n)).repair).toMatchObject({ kind: 'unconfirmed-commit' });
  });

  it('a row below where the unconfirmed allocation found it went back as well: a regression (a failover during the commit)', async () => {
    const marks = new MapMarks();
    const fence = new HighWaterFence(marks);
    await fence.publish(await fence.plan('t', 5001n), 6001n);
    // The primary died with the COMMIT; the promoted replica had max_id 2001.
    expect((await fence.plan('t', 2001n)).repair).toMatchObject({
      maxId: 2001n,
      highWater: 6001n,
      kind: 'regression',
    });
  });

  it('a lost compare-and-set throws HighWaterConflict; the retry gives up after the bound with LEAF_HIGH_WATER_UNAVAILABLE', async () => {
    const marks = new MapMarks();
    const fence = new HighWaterFence(marks);
    const plan = await fence.plan('t', 1n);
    marks.marks.set('t', { value: 5n, version: 0 });
    await expect(fence.publish(plan, 1001n)).rejects.toBeInstanceOf(HighWaterConflict);
    let attempts = 0;
    await expect(
      withHighWaterRetry('t', () => {
        attempts++;
        return Promise.reject(new HighWaterConflict('t'));
      }),
    ).rejects.toBeInstanceOf(HighWaterUnavailableError);
    expect(attempts).toBe(HIGH_WATER_ATTEMPTS);
  });

  it('hand-back lowers the mark only from exactly the expected value', async () => {
    const marks = new MapMarks();
    marks.marks.set('t', { value: 2001n, version: 1 });
    const fence = new HighWaterFence(marks);
    expect(await fence.handBack('t', 1001n, 501n)).toBe(false);
    expect(await fence.handBack('t', 2001n, 1501n)).toBe(true);
    expect(marks.marks.get('t')?.value).toBe(1501n);
  });
});

describe('RecordingHighWaterStore', () => {
  it('remembers the mark last read or written per tag, not a lost compare-and-set', async () => {
    const store = new RecordingHighWaterStore(new MapMarks());
    expect(await store.read('t')).toBeNull();
    expect(store.lastSeen('t')).toBeNull();
    expect(await store.write('t', 1001n, null)).toBe(true);
    expect(store.lastSeen('t')).toBe(1001n);
    expect(await store.write('t', 5001n, null)).toBe(false);
    expect(store.lastSeen('t')).toBe(1001n);
    expect(await store.write('t', 2001n, await store.read('t'))).toBe(true);
    expect(store.lastSeen('t')).toBe(2001n);
    expect(store.lastSeen('u')).toBeNull();
  });
});
