import { WorkerIdInUseError } from '../errors/worker-id-in-use.error';
import { FakeClock } from '../../testing/fake-clock';
import { FakeZkClient } from '../../testing/fake-zk.client';
import { silentSnowflakeLogger } from './snowflake-logger';
import { WorkerAliveNode } from './worker-alive.node';

const flush = () => new Promise((resolve) => setImmediate(resolve));

describe('WorkerAliveNode (liveness guard)', () => {
  let zk: FakeZkClient;
  beforeEach(async () => {
    zk = new FakeZkClient();
    await zk.connect(100);
  });
  afterEach(async () => {
    await zk.close();
  });

  const node = (run: string, identity = '10.0.0.8:8080') =>
    new WorkerAliveNode(zk, 'leaf', 3, identity, 1000, run);

  it('creates /snowflake/{name}/alive/{workerId} (and its parent) with its identity and run', async () => {
    const alive = node('run-a');
    await expect(alive.acquire()).resolves.toEqual({ acquired: true });
    expect(alive.path).toBe('/snowflake/leaf/alive/3');
    expect(JSON.parse((await zk.getData(alive.path)).data.toString())).toEqual({
      identity: '10.0.0.8:8080',
      pid: process.pid,
      startedAt: 1000,
      run: 'run-a',
    });
  });

  it('recognises its own node (a create whose answer was lost) and refuses another holder', async () => {
    const mine = node('run-a');
    await mine.acquire();
    await expect(mine.acquire()).resolves.toEqual({ acquired: true });
    const other = await node('run-b').acquire();
    expect(other).toMatchObject({ acquired: false });
    expect((other as { holder: string }).holder).toContain('run-a');
  });

  it('release deletes only its own node', async () => {
    const mine = node('run-a');
    await mine.acquire();
    await node('run-b').release(); // not the holder: nothing happens
    expect(zk.paths()).toContain(mine.path);
    await mine.release();
    expect(zk.paths()).not.toContain(mine.path);
    await expect(node('run-b').acquire()).resolves.toEqual({ acquired: true });
  });

  it('an ephemeral node ends with its session: another holder can take it after an expiry', async () => {
    await node('run-a').acquire();
    zk.simulateExpiry();
    await flush();
    await expect(node('run-b').acquire()).resolves.toEqual({ acquired: true });
  });

  it('at start waits for a crashed holder (session timeout + 2 s), then refuses with WorkerIdInUseError', async () => {
    await node('run-a').acquire();
    const clock = new FakeClock(0);
    const waiting = node('run-b').acquireAtStart(4000, 100, clock, silentSnowflakeLogger);
    const outcome = waiting.then(
      () => 'acquired',
      (error: unknown) => error,
    );
    for (let i = 0; i < 20 && clock.pendingSleeps === 0; i++) await flush();
    while (clock.pendingSleeps > 0) {
      clock.advance(500);
      for (let i = 0; i < 5; i++) await flush();
    }
    const error = await outcome;
    expect(error).toBeInstanceOf(WorkerIdInUseError);
    expect(error).toMatchObject({ workerId: 3, waitedMs: 6000 });
  });

  it('at start takes the node as soon as the crashed holder session ends', async () => {
    const crashed = node('run-a');
    await crashed.acquire();
    const clock = new FakeClock(0);
    const waiting = node('run-b').acquireAtStart(4000, 100, clock, silentSnowflakeLogger);
    for (let i = 0; i < 20 && clock.pendingSleeps === 0; i++) await flush();
    await crashed.release(); // its session ended
    clock.advance(500);
    await expect(waiting).resolves.toBe(true); // it had to wait
  });
});
