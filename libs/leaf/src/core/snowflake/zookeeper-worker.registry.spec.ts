import { WorkerStateCorruptError } from '../errors/worker-state-corrupt.error';
import { FakeClock } from '../../testing/fake-clock';
import { FakeZkClient } from '../../testing/fake-zk.client';
import { ZkError } from '../zookeeper/zk-client.port';
import { silentSnowflakeLogger } from './snowflake-logger';
import { ZookeeperWorkerRegistry } from './zookeeper-worker.registry';

const T0 = 1_700_000_000_000;
const PARENT = '/snowflake/leaf/forever';

/** A fake whose chosen listings come from a server that has not applied our creates yet. */
class LaggingZkClient extends FakeZkClient {
  listings = 0;
  /** 1-based numbers of the listings that miss the nodes of 10.0.0.8:8080. */
  readonly stale = new Set<number>();
  override async getChildren(path: string): Promise<string[]> {
    const n = ++this.listings;
    const result = await super.getChildren(path);
    return this.stale.has(n)
      ? result.filter((child) => !child.startsWith('10.0.0.8:8080-'))
      : result;
  }
}

async function connected<T extends FakeZkClient>(zk: T): Promise<T> {
  await zk.connect(100);
  return zk;
}

function registry(zk: FakeZkClient, ip = '10.0.0.8', port = 8080, name = 'leaf') {
  return new ZookeeperWorkerRegistry(zk, name, ip, port, new FakeClock(T0), silentSnowflakeLogger);
}

const children = (zk: FakeZkClient, parent = PARENT) =>
  zk.paths().filter((p) => p.startsWith(`${parent}/`));

describe('ZookeeperWorkerRegistry', () => {
  it('creates the parent path and a node on first start, with the JSON data', async () => {
    const zk = await connected(new FakeZkClient());
    const registration = await registry(zk).register();
    expect(registration).toEqual({
      path: `${PARENT}/10.0.0.8:8080-0000000000`,
      sequence: 0,
      created: true,
      data: { ip: '10.0.0.8', port: 8080, timestamp: T0, reservedUntil: T0 },
    });
    const { data } = await zk.getData(registration.path);
    expect(JSON.parse(data.toString())).toEqual({
      ip: '10.0.0.8',
      port: 8080,
      timestamp: T0,
      reservedUntil: T0,
      registration: expect.stringMatching(/^[0-9a-f]{16}$/),
    });
  });

  it('takes the sequence of the node actually created, not 0', async () => {
    const zk = await connected(new FakeZkClient());
    for (let port = 1; port <= 3; port++) await registry(zk, '10.0.0.1', port).register();
    const registration = await registry(zk).register();
    expect(registration.sequence).toBe(3);
    expect(registration.path).toBe(`${PARENT}/10.0.0.8:8080-0000000003`);
  });

  it('reuses the existing node of the same ip:port', async () => {
    const zk = await connected(new FakeZkClient());
    await registry(zk, '10.0.0.1', 1).register();
    const first = await registry(zk).register();
    await zk.setData(
      first.path,
      Buffer.from(
        JSON.stringify({ ip: '10.0.0.8', port: 8080, timestamp: T0 + 5, reservedUntil: T0 + 9 }),
      ),
    );
    const again = await registry(zk).register();
    expect(again).toEqual({
      path: first.path,
      sequence: 1,
      created: false,
      data: { ip: '10.0.0.8', port: 8080, timestamp: T0 + 5, reservedUntil: T0 + 9 },
    });
    expect(children(zk)).toHaveLength(2);
  });

  it('works with names and host names containing "-"', async () => {
    const zk = await connected(new FakeZkClient());
    await registry(zk, 'id-gen-0.id-gen', 8080, 'order-ids').register();
    const second = await registry(zk, 'id-gen-1.id-gen', 8080, 'order-ids').register();
    const again = await registry(zk, 'id-gen-1.id-gen', 8080, 'order-ids').register();
    expect(second.sequence).toBe(1);
    expect(again).toMatchObject({
      path: '/snowflake/order-ids/forever/id-gen-1.id-gen:8080-0000000001',
      created: false,
    });
  });

  it('adopts the node of a create whose answer was lost instead of creating a second one', async () => {
    const zk = await connected(new FakeZkClient());
    zk.loseResponseOfNextCreate();
    const registration = await registry(zk).register();
    expect(registration).toMatchObject({ sequence: 0, created: true });
    expect(children(zk)).toEqual([`${PARENT}/10.0.0.8:8080-0000000000`]);
  });

  it('removes the duplicate when a lagging read made the retry create a second node', async () => {
    const zk = await connected(new LaggingZkClient());
    await registry(zk, '10.0.0.1', 1).register();
    zk.listings = 0;
    // 1st listing: nothing of ours; the create lands as sequence 1 but its answer is lost;
    // 2nd listing (the retry) misses it, so a second create makes sequence 2; 3rd sees both.
    zk.stale.add(2);
    zk.loseResponseOfNextCreate();
    const lost = registry(zk).register();
    const registration = await lost;
    expect(registration).toMatchObject({
      sequence: 1,
      created: true,
      path: `${PARENT}/10.0.0.8:8080-0000000001`,
    });
    expect(children(zk)).toEqual([
      `${PARENT}/10.0.0.1:1-0000000000`,
      `${PARENT}/10.0.0.8:8080-0000000001`,
    ]);
  });

  it('never deletes a node of the same identity that it did not create; the lowest wins', async () => {
    const zk = await connected(new FakeZkClient());
    await zk.mkdirp(PARENT);
    await zk.createPersistentSequential(
      `${PARENT}/10.0.0.8:8080-`,
      Buffer.from('{"ip":"10.0.0.8","port":"8080","timestamp":1}'),
    );
    await zk.createPersistentSequential(
      `${PARENT}/10.0.0.8:8080-`,
      Buffer.from('{"ip":"10.0.0.8","port":"8080","timestamp":2}'),
    );
    const registration = await registry(zk).register();
    expect(registration).toMatchObject({ sequence: 0, created: false, data: { timestamp: 1 } });
    expect(children(zk)).toHaveLength(2);
  });

  it('refuses unreadable node data', async () => {
    const zk = await connected(new FakeZkClient());
    await zk.mkdirp(PARENT);
    await zk.createPersistentSequential(`${PARENT}/10.0.0.8:8080-`, Buffer.from('garbage'));
    await expect(registry(zk).register()).rejects.toBeInstanceOf(WorkerStateCorruptError);
  });

  it('gives up after repeated connection losses', async () => {
    const zk = await connected(new FakeZkClient());
    await zk.mkdirp(PARENT);
    zk.failNext('getChildren', 'CONNECTION_LOSS');
    zk.failNext('getChildren', 'CONNECTION_LOSS');
    zk.failNext('getChildren', 'CONNECTION_LOSS');
    await expect(registry(zk).register()).rejects.toMatchObject({ zkCode: 'CONNECTION_LOSS' });
    zk.failNext('getChildren', 'CONNECTION_LOSS');
    await expect(registry(zk).register()).resolves.toMatchObject({ sequence: 0 });
  });

  it('finds the node of its identity, or none', async () => {
    const zk = await connected(new FakeZkClient());
    await expect(registry(zk).find()).resolves.toBeNull();
    await registry(zk, '10.0.0.1', 1).register();
    await expect(registry(zk).find()).resolves.toBeNull();
    await registry(zk).register();
    await expect(registry(zk).find()).resolves.toEqual({
      path: `${PARENT}/10.0.0.8:8080-0000000001`,
      sequence: 1,
    });
  });

  it('writes { ip, port, timestamp, reservedUntil, horizon, run } to the node', async () => {
    const zk = await connected(new FakeZkClient());
    const r = registry(zk);
    const { path } = await r.register();
    const record = {
      timestamp: T0 + 1,
      reservedUntil: T0 + 10_001,
      horizon: T0 + 60_001,
      run: 'r1',
    };
    await r.write(path, record);
    const { data, version } = await zk.getData(path);
    expect(JSON.parse(data.toString())).toEqual({ ip: '10.0.0.8', port: 8080, ...record });
    await expect(r.read(path)).resolves.toEqual({ ip: '10.0.0.8', port: 8080, ...record });
    expect(version).toBe(1);
    await expect(r.write(`${PARENT}/gone-0000000009`, record)).rejects.toBeInstanceOf(ZkError);
  });
});
