import { FakeClock } from '../../testing/fake-clock';
import { FakeZkClient } from '../../testing/fake-zk.client';
import { ZkError } from '../zookeeper/zk-client.port';
import { silentSnowflakeLogger } from './snowflake-logger';
import { ZkWorkerBinding } from './zk-worker.binding';
import { ZookeeperWorkerRegistry } from './zookeeper-worker.registry';

const record = { timestamp: 1, reservedUntil: 10_001, horizon: 60_001, run: 'r' };

describe('ZkWorkerBinding (the lease as ZooKeeper sees it)', () => {
  let zk: FakeZkClient;
  let registry: ZookeeperWorkerRegistry;
  let path: string;
  beforeEach(async () => {
    zk = new FakeZkClient();
    await zk.connect(100);
    registry = new ZookeeperWorkerRegistry(
      zk,
      'leaf',
      '10.0.0.8',
      8080,
      new FakeClock(0),
      silentSnowflakeLogger,
    );
    path = (await registry.register()).path;
  });
  afterEach(async () => {
    await zk.close();
  });

  it('is writable only while connected, verified, bound and holding the liveness node', async () => {
    const binding = new ZkWorkerBinding(zk, registry, path, true, true, 1000, 'r', undefined, null);
    expect(binding.available).toBe(true);
    await binding.write(record);
    expect(await registry.read(path)).toMatchObject(record);
    expect(
      new ZkWorkerBinding(zk, registry, path, false, true, 1000, 'r', undefined, null).available,
    ).toBe(false);
    expect(
      new ZkWorkerBinding(zk, registry, path, true, false, 1000, 'r', undefined, null).available,
    ).toBe(false);
    expect(
      new ZkWorkerBinding(zk, registry, null, true, true, 1000, 'r', undefined, null).available,
    ).toBe(false);
    zk.simulateDisconnect();
    expect(binding.available).toBe(false);
    expect(binding.fenced).toBeNull(); // a disconnection is not an expiry
  });

  it('is fenced once the session is lost, until the liveness node is held in a later session', () => {
    const binding = new ZkWorkerBinding(zk, registry, path, true, true, 1000, 'r', undefined, null);
    const before = binding.sessionEpoch;
    binding.sessionLost('expired (test)');
    expect(binding).toMatchObject({ available: false, aliveHeld: false, fenced: 'expired (test)' });
    // A create made in the session that was lost does not count.
    expect(binding.aliveAcquired(before)).toBe(false);
    expect(binding.fenced).toBe('expired (test)');
    expect(binding.aliveAcquired(binding.sessionEpoch)).toBe(true);
    expect(binding).toMatchObject({ available: true, aliveHeld: true, fenced: null });
  });

  it('fences itself when a write answers SESSION_EXPIRED, and reports a deleted node', async () => {
    const binding = new ZkWorkerBinding(zk, registry, path, true, true, 1000, 'r', undefined, null);
    zk.failNext('setData', 'SESSION_EXPIRED');
    await expect(binding.write(record)).rejects.toBeInstanceOf(ZkError);
    expect(binding.fenced).toMatch(/session .*expired/);

    const other = new ZkWorkerBinding(zk, registry, path, true, true, 1000, 'r', undefined, null);
    const gone: string[] = [];
    other.onNodeGone = (reason) => gone.push(reason);
    await zk.delete(path);
    await expect(other.write(record)).rejects.toMatchObject({ zkCode: 'NO_NODE' });
    expect(gone[0]).toMatch(/no longer exists/);
  });
});
