import { AllocationError } from '../errors/allocation.error';
import { SegmentNotReadyError } from '../errors/segment-not-ready.error';
import { TagNotFoundError } from '../errors/tag-not-found.error';
import { InMemoryAllocStore } from '../../testing/in-memory-alloc.store';
import { FakeClock } from '../../testing/fake-clock';
import { SegmentCache } from './segment-cache';
import { segmentCacheTestOptions } from '../../testing/test-helpers';

const options = segmentCacheTestOptions({ unknownTagTtlMs: 5000, unknownTagCacheSize: 3 });

async function started(store: InMemoryAllocStore, clock = new FakeClock(0)): Promise<SegmentCache> {
  const cache = new SegmentCache(store, options, clock);
  await cache.refreshTags();
  return cache;
}

describe('SegmentCache: keys created after the last tag refresh', () => {
  it('serves a tag created elsewhere at once, on every path, with one look-up', async () => {
    const store = new InMemoryAllocStore().setTag('order', 10);
    const cache = await started(store);
    store.setTag('fresh', 10, 100n); // another instance created it
    expect(await cache.get('fresh')).toBe(100n);
    expect(await cache.getIds('fresh', 2)).toEqual([101n, 102n]);
    expect(cache.getSync('fresh')).toBe(103n);
    expect(cache.tags()).toContain('fresh');
    expect(store.lookups).toEqual(['fresh']);
    const store2 = new InMemoryAllocStore().setTag('order', 10);
    const other = await started(store2);
    store2.setTag('ranged', 10, 5n);
    expect(await other.getRange('ranged', 3)).toEqual({ start: 5n, end: 8n });
  });

  it('answers an unknown key TagNotFoundError and remembers it for the TTL, per key', async () => {
    const clock = new FakeClock(0);
    const store = new InMemoryAllocStore().setTag('order', 10);
    const cache = await started(store, clock);
    for (let i = 0; i < 5; i++) {
      await expect(cache.get('ghost')).rejects.toBeInstanceOf(TagNotFoundError);
      await expect(cache.getIds('ghost', 1)).rejects.toBeInstanceOf(TagNotFoundError);
      expect(() => cache.getSync('ghost')).toThrow(TagNotFoundError);
    }
    expect(store.lookups).toEqual(['ghost']);
    // Created meanwhile: still "not found" until the entry expires...
    store.setTag('ghost', 10);
    clock.advance(4999);
    await expect(cache.get('ghost')).rejects.toBeInstanceOf(TagNotFoundError);
    // ...then looked up again and served.
    clock.advance(1);
    expect(await cache.get('ghost')).toBe(1n);
    expect(store.lookups).toEqual(['ghost', 'ghost']);
  });

  it('shares one query among concurrent requests for one key', async () => {
    const store = new InMemoryAllocStore().setTag('order', 10);
    const cache = await started(store);
    store.setTag('burst', 100);
    store.hold();
    const answers = Array.from({ length: 20 }, () => cache.get('burst'));
    const misses = Array.from({ length: 20 }, () => cache.get('nobody'));
    await Promise.resolve();
    store.release();
    const ids = await Promise.all(answers);
    expect(new Set(ids).size).toBe(20);
    for (const miss of misses) await expect(miss).rejects.toBeInstanceOf(TagNotFoundError);
    expect(store.lookups.sort()).toEqual(['burst', 'nobody']);
  });

  it('bounds the negative cache: the oldest key is forgotten first', async () => {
    const store = new InMemoryAllocStore().setTag('order', 10);
    const cache = await started(store);
    for (const key of ['a', 'b', 'c', 'd']) {
      await expect(cache.get(key)).rejects.toBeInstanceOf(TagNotFoundError);
    }
    // Size 3: "a" was dropped to make room for "d"; "b", "c", "d" are still cached.
    for (const key of ['b', 'c', 'd', 'a']) {
      await expect(cache.get(key)).rejects.toBeInstanceOf(TagNotFoundError);
    }
    expect(store.lookups).toEqual(['a', 'b', 'c', 'd', 'a']);
  });

  it('starts a look-up from the sync paths and answers not-ready until it is done', async () => {
    const store = new InMemoryAllocStore().setTag('order', 10);
    const cache = await started(store);
    store.setTag('late', 10);
    expect(() => cache.getSync('late')).toThrow(SegmentNotReadyError);
    expect(() => cache.generator('late')).toThrow(SegmentNotReadyError);
    expect(store.lookups).toEqual(['late']);
    expect(await cache.get('late')).toBe(1n);
    expect(cache.generator('late').next()).toBe(2n);
  });

  it('does not remember a failed look-up: the database error is the answer', async () => {
    const store = new InMemoryAllocStore().setTag('order', 10);
    const cache = await started(store);
    const findTag = jest
      .spyOn(store, 'findTag')
      .mockRejectedValueOnce(new AllocationError('x', 'database down'));
    await expect(cache.get('x')).rejects.toBeInstanceOf(AllocationError);
    store.setTag('x', 10);
    expect(await cache.get('x')).toBe(1n);
    expect(findTag).toHaveBeenCalledTimes(2);
  });

  it('keeps a tag a look-up found while a refresh that had not seen it was running', async () => {
    const store = new InMemoryAllocStore().setTag('order', 10);
    const cache = await started(store);
    // A refresh reads the list before the tag exists...
    const listTags = store.listTags.bind(store);
    let releaseList: () => void = () => undefined;
    jest.spyOn(store, 'listTags').mockImplementationOnce(async () => {
      const tags = await listTags();
      await new Promise<void>((resolve) => (releaseList = resolve));
      return tags;
    });
    const refresh = cache.refreshTags();
    await Promise.resolve();
    // ...the tag is created and found meanwhile...
    store.setTag('raced', 10);
    expect(await cache.get('raced')).toBe(1n);
    releaseList();
    // ...and the refresh does not drop it as deleted.
    expect((await refresh).removed).toEqual([]);
    expect(await cache.get('raced')).toBe(2n);
    // A later refresh that does not find it drops it.
    store.deleteTag('raced');
    expect((await cache.refreshTags()).removed).toEqual(['raced']);
  });

  it('tagCreated serves a tag at once and forgets its negative-cache entry', async () => {
    const store = new InMemoryAllocStore().setTag('order', 10);
    const cache = await started(store);
    await expect(cache.get('admin')).rejects.toBeInstanceOf(TagNotFoundError);
    await store.createTag({ tag: 'admin', step: 10 });
    cache.tagCreated('admin');
    expect(await cache.get('admin')).toBe(1n);
    expect(store.lookups).toEqual(['admin']);
  });
});
