import { IdService, type LeafMode } from '../id.service';
import { TagNotFoundError } from '../errors/tag-not-found.error';
import { IdBatcher } from './id-batcher';

/** Counts from 1 per mode and key; records each call. */
class CountingIds extends IdService {
  readonly calls: string[] = [];
  private readonly next = new Map<string, bigint>();

  private take(mode: LeafMode, key: string, count: number): bigint[] {
    if (key === 'missing') throw new TagNotFoundError(key);
    const name = `${mode}:${key}`;
    const first = this.next.get(name) ?? 1n;
    this.next.set(name, first + BigInt(count));
    return Array.from({ length: count }, (_, i) => first + BigInt(i));
  }

  get(mode: LeafMode, key: string): Promise<bigint> {
    this.calls.push(`get ${mode} ${key}`);
    return Promise.resolve().then(() => this.take(mode, key, 1)[0]);
  }

  getIds(mode: LeafMode, key: string, count: number): Promise<bigint[]> {
    this.calls.push(`getIds ${mode} ${key} ${count}`);
    return Promise.resolve().then(() => this.take(mode, key, count));
  }
}

describe('IdBatcher', () => {
  it('serves the IDs asked for in one turn with one call per mode and key, in order, chunked', async () => {
    const ids = new CountingIds();
    const batcher = new IdBatcher(ids, 4);
    const asked = [
      ...Array.from({ length: 6 }, () => batcher.next('segment', 'a')),
      batcher.next('snowflake', 'a'),
      batcher.next('segment', 'b'),
    ];
    expect(await Promise.all(asked)).toEqual([1n, 2n, 3n, 4n, 5n, 6n, 1n, 1n]);
    expect(ids.calls).toEqual([
      'getIds segment a 4',
      'getIds segment a 2',
      'get snowflake a',
      'get segment b',
    ]);
  });

  it('a later turn takes a call of its own', async () => {
    const ids = new CountingIds();
    const batcher = new IdBatcher(ids, 1000);
    expect(await batcher.next('segment', 'a')).toBe(1n);
    expect(await Promise.all([batcher.next('segment', 'a'), batcher.next('segment', 'a')])).toEqual(
      [2n, 3n],
    );
    expect(ids.calls).toEqual(['get segment a', 'getIds segment a 2']);
  });

  it('rejects every waiter of a failed call with the source’s error, and only those', async () => {
    const ids = new CountingIds();
    const batcher = new IdBatcher(ids, 1000);
    const missing = [batcher.next('segment', 'missing'), batcher.next('segment', 'missing')];
    const fine = batcher.next('segment', 'a');
    for (const result of await Promise.allSettled(missing)) {
      expect(result.status).toBe('rejected');
      expect((result as PromiseRejectedResult).reason).toBeInstanceOf(TagNotFoundError);
    }
    expect(await fine).toBe(1n);
  });
});
