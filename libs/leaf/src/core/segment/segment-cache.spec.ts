import { ModeDisabledError } from '../errors/mode-disabled.error';
import { SegmentNotInitializedError } from '../errors/segment-not-initialized.error';
import { ShuttingDownError } from '../errors/shutting-down.error';
import { TagNotFoundError } from '../errors/tag-not-found.error';
import { InMemoryAllocStore } from '../../testing/in-memory-alloc.store';
import { FakeClock } from '../../testing/fake-clock';
import { SegmentCache } from './segment-cache';
import { segmentCacheTestOptions } from '../../testing/test-helpers';

const options = segmentCacheTestOptions();

describe('SegmentCache (no Nest)', () => {
  it('follows the table: refresh adds and drops keys, and reports what changed', async () => {
    const store = new InMemoryAllocStore().setTag('order', 10).setTag('coupon', 10);
    const cache = new SegmentCache(store, options, new FakeClock(0));
    await expect(cache.get('order')).rejects.toBeInstanceOf(SegmentNotInitializedError);
    expect(await cache.refreshTags()).toEqual({
      added: ['order', 'coupon'],
      removed: [],
      total: 2,
      first: true,
    });
    expect(await cache.get('order')).toBe(1n);
    store.deleteTag('coupon');
    store.setTag('user', 5);
    expect(await cache.refreshTags()).toEqual({
      added: ['user'],
      removed: ['coupon'],
      total: 2,
      first: false,
    });
    await expect(cache.get('coupon')).rejects.toBeInstanceOf(TagNotFoundError);
    expect(cache.tags().sort()).toEqual(['order', 'user']);
    await cache.close();
  });

  it('serves single IDs, batches and ranges from one key without overlap', async () => {
    const store = new InMemoryAllocStore().setTag('order', 100);
    const cache = new SegmentCache(store, options, new FakeClock(0));
    await cache.refreshTags();
    await cache.warm(['order']);
    const one = cache.getSync('order');
    const batch = await cache.getIds('order', 10);
    const range = await cache.getRange('order', 20);
    const all = [one, ...batch];
    for (let id = range.start; id < range.end; id++) all.push(id);
    expect(new Set(all).size).toBe(all.length);
    await expect(cache.warm(['missing'])).rejects.toBeInstanceOf(TagNotFoundError);
    await cache.close();
  });

  it('without a store every call is ModeDisabledError; after close, ShuttingDownError', async () => {
    const off = new SegmentCache(null, options, new FakeClock(0));
    expect(() => off.getSync('order')).toThrow(ModeDisabledError);
    await expect(off.refreshTags()).rejects.toBeInstanceOf(ModeDisabledError);
    const cache = new SegmentCache(
      new InMemoryAllocStore().setTag('a', 10),
      options,
      new FakeClock(0),
    );
    await cache.refreshTags();
    await cache.close();
    expect(() => cache.getSync('a')).toThrow(ShuttingDownError);
  });
});
