import { InMemoryNumberFormatStore } from '../../testing/in-memory-number-format.store';
import { checkNewNumberFormat } from './number-format';
import { NumberFormatCache } from './number-format.cache';

const TIMINGS = { formatTtlMs: 60_000, missingFormatTtlMs: 5000 };

describe('NumberFormatCache.reservedBy', () => {
  it('reserves a format tag and its period counter rows, nothing else', async () => {
    const store = new InMemoryNumberFormatStore();
    await store.createFormat(
      checkNewNumberFormat({ tag: 'orders', prefix: 'ORD', datePattern: 'yyyyMMdd', width: 6 }),
    );
    const cache = new NumberFormatCache(store, () => 0, TIMINGS);
    expect(await cache.reservedBy('orders')).toBe('orders');
    expect(cache.reservedBy('orders:20261204')).toBe('orders');
    expect(cache.reservedBy('orders:202612')).toBe('orders');
    expect(cache.reservedBy('orders:2026')).toBe('orders');
    for (const tag of ['order', 'orders:1', 'orders:2026120', 'orders-20261204', 'x:orders']) {
      expect(cache.reservedBy(tag)).toBeNull();
    }
  });

  it('takes a format defined through this instance at once, others at the next read', async () => {
    const store = new InMemoryNumberFormatStore();
    let mono = 0;
    const cache = new NumberFormatCache(store, () => mono, TIMINGS);
    expect(await cache.reservedBy('sn')).toBeNull();
    const sn = await store.createFormat(checkNewNumberFormat({ tag: 'sn', width: 6 }));
    expect(cache.reservedBy('sn')).toBeNull();
    cache.changed(sn);
    expect(cache.reservedBy('sn')).toBe('sn');
    await store.createFormat(checkNewNumberFormat({ tag: 'other', width: 6 }));
    mono += 60_001;
    expect(cache.reservedBy('other')).toBeNull(); // this call starts the read
    await new Promise((resolve) => setImmediate(resolve));
    expect(cache.reservedBy('other')).toBe('other');
  });

  it('reserves nothing while the list cannot be read (IDs are not refused for a hiccup)', async () => {
    const store = new InMemoryNumberFormatStore();
    store.listFormats = () => Promise.reject(new Error('database down'));
    const cache = new NumberFormatCache(store, () => 0, TIMINGS);
    expect(await cache.reservedBy('sn')).toBeNull();
    expect(cache.reservedBy('sn')).toBeNull();
  });
});
