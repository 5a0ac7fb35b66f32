import { HighWaterUnavailableError } from '../../core/errors/allocation.error';
import { FakeZkClient } from '../../testing/fake-zk.client';
import { ZookeeperHighWaterStore } from './zookeeper-high-water.store';

describe('ZookeeperHighWaterStore (FakeZkClient)', () => {
  it('creates, reads and compare-and-sets one znode per tag, as a decimal string', async () => {
    const zk = new FakeZkClient();
    await zk.connect(100);
    const store = new ZookeeperHighWaterStore(zk, 'app');
    expect(await store.read('order')).toBeNull();
    expect(await store.write('order', 1001n, null)).toBe(true);
    expect(await store.write('order', 7n, null)).toBe(false);
    const mark = await store.read('order');
    expect(mark?.value).toBe(1001n);
    expect((await zk.getData('/segment/app/high-water/order')).data.toString()).toBe('1001');
    expect(await store.write('order', 2001n, mark)).toBe(true);
    expect(await store.write('order', 3001n, mark)).toBe(false);
    expect((await store.read('order'))?.value).toBe(2001n);
  });

  it('refuses at once while disconnected, with LEAF_HIGH_WATER_UNAVAILABLE', async () => {
    const store = new ZookeeperHighWaterStore(new FakeZkClient(), 'app');
    await expect(store.read('order')).rejects.toBeInstanceOf(HighWaterUnavailableError);
  });

  it('bounds every call by callTimeoutMs (segment.highWater.callTimeoutMs)', async () => {
    class StalledZk extends FakeZkClient {
      override getData(): never {
        // A ZooKeeper that accepts the request and never answers.
        return new Promise(() => undefined) as never;
      }
    }
    const zk = new StalledZk();
    await zk.connect(100);
    const store = new ZookeeperHighWaterStore(zk, 'app', { callTimeoutMs: 100 });
    const started = Date.now();
    const error = (await store.read('order').catch((e: unknown) => e)) as Error;
    expect(error).toBeInstanceOf(HighWaterUnavailableError);
    expect(error.message).toMatch(/within 100 ms/);
    expect(Date.now() - started).toBeLessThan(1000);
  });
});
