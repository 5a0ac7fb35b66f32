import { FakeClock } from '../../testing/fake-clock';
import { FakeZkClient } from '../../testing/fake-zk.client';
import { InMemoryWorkerStateStores } from '../../testing/in-memory-worker-state.store';
import { TEST_SNOWFLAKE_SETTINGS } from '../../testing/snowflake-fixtures';
import { ZkError } from '../zookeeper/zk-client.port';
import { LocalWorkerIdSource } from './local-worker-id.source';
import { silentSnowflakeLogger } from './snowflake-logger';
import { reclaimWorkerId, type WorkerReclaimInput } from './worker-reclaim';
import { ZookeeperWorkerRegistry } from './zookeeper-worker.registry';

const T0 = 1_700_000_000_000;
const PARENT = '/snowflake/leaf/forever';
const NODE = `${PARENT}/10.0.0.1:1-0000000000`;
const ALIVE = '/snowflake/leaf/alive/0';

/** A client whose next `setData` runs `hook` first, and may lose its reply. */
class HookedZk extends FakeZkClient {
  beforeSetData: (() => Promise<void>) | null = null;
  loseSetDataReply = false;

  override async setData(path: string, data: Buffer, version = -1): Promise<void> {
    const hook = this.beforeSetData;
    this.beforeSetData = null;
    if (hook) await hook();
    await super.setData(path, data, version);
    if (this.loseSetDataReply) {
      this.loseSetDataReply = false;
      throw new ZkError('CONNECTION_LOSS', 'setData: reply lost (test)');
    }
  }
}

describe('reclaimWorkerId: the conditional takeover', () => {
  let clock: FakeClock;
  let admin: FakeZkClient;

  beforeEach(async () => {
    clock = new FakeClock(T0);
    admin = new FakeZkClient();
    await admin.connect(100);
    await admin.mkdirp(PARENT);
    // A holder that is gone: no liveness node, horizon 10 s ago.
    await admin.createPersistentSequential(
      `${PARENT}/10.0.0.1:1-`,
      Buffer.from(
        JSON.stringify({
          ip: '10.0.0.1',
          port: 1,
          timestamp: T0 - 20_000,
          reservedUntil: T0 - 15_000,
          horizon: T0 - 10_000,
          run: 'old',
        }),
      ),
    );
  });
  afterEach(() => admin.close());

  async function claimer(identity: string, run: string) {
    const zk = new HookedZk(admin);
    await zk.connect(100);
    const [ip, port] = identity.split(':');
    const registry = new ZookeeperWorkerRegistry(
      zk,
      'leaf',
      ip!,
      Number(port),
      clock,
      silentSnowflakeLogger,
    );
    const stores = new InMemoryWorkerStateStores();
    const input: WorkerReclaimInput = {
      options: {
        name: 'leaf',
        snowflake: TEST_SNOWFLAKE_SETTINGS,
        clock,
        source: new LocalWorkerIdSource(0),
        stateStore: stores.factory,
      },
      logger: silentSnowflakeLogger,
      file: stores.of({ kind: 'zookeeper', name: 'leaf', ip: ip!, port: Number(port) }),
      run,
      zk,
      registry,
      marginMs: 2000,
      maxWaitMs: 0,
    };
    return { zk, input };
  }

  const nodeRun = async () =>
    (JSON.parse((await admin.getData(NODE)).data.toString()) as { run: string }).run;
  const aliveHolder = async () =>
    (JSON.parse((await admin.getData(ALIVE)).data.toString()) as { run: string }).run;

  it('takes over a worker ID whose liveness node is gone and whose horizon + margin has passed, keeping the old bounds', async () => {
    const { input } = await claimer('10.0.0.2:2', 'new');
    const won = await reclaimWorkerId(input);
    expect(won).not.toBeNull();
    expect(won!.registration).toMatchObject({ path: NODE, sequence: 0, created: false });
    expect(won!.previous).toEqual({ identity: '10.0.0.1:1', run: 'old', horizon: T0 - 10_000 });
    const data = JSON.parse((await admin.getData(NODE)).data.toString()) as Record<string, unknown>;
    // The claim names the new holder and keeps the old holder's lease and horizon.
    expect(data).toMatchObject({
      ip: '10.0.0.2',
      port: 2,
      run: 'new',
      reservedUntil: T0 - 15_000,
      horizon: T0 - 10_000,
    });
    expect(await aliveHolder()).toBe('new');
  });

  it('does not take a worker ID whose liveness node exists, or whose horizon + margin is still ahead', async () => {
    await admin.mkdirp('/snowflake/leaf/alive');
    await admin.createEphemeral(ALIVE, Buffer.from('{"run":"live"}'));
    const { input } = await claimer('10.0.0.2:2', 'new');
    expect(await reclaimWorkerId(input)).toBeNull();
    await admin.delete(ALIVE);
    clock.set(T0 - 11_000); // horizon + 2 s margin not passed yet
    expect(await reclaimWorkerId(input)).toBeNull();
    expect(await nodeRun()).toBe('old');
  });

  it('waits (up to maxWaitMs) for a horizon to pass, then takes it', async () => {
    clock.set(T0 - 10_000);
    const { input } = await claimer('10.0.0.2:2', 'new');
    const pending = reclaimWorkerId({ ...input, maxWaitMs: 5000 });
    for (let i = 0; i < 100 && clock.pendingSleeps === 0; i++) await new Promise(setImmediate);
    let won = null;
    for (let i = 0; i < 50; i++) {
      clock.advance(100);
      await new Promise(setImmediate);
      await new Promise(setImmediate);
      won = await Promise.race([
        pending,
        new Promise<'pending'>((r) => setImmediate(() => r('pending'))),
      ]);
      if (won !== 'pending') break;
    }
    expect(won).not.toBe('pending');
    expect(won).not.toBeNull();
    expect(clock.now()).toBeGreaterThan(T0 - 10_000 + 2000);
  });

  it('two claimers at once: exactly one wins, the other is refused by the liveness node', async () => {
    const a = await claimer('10.0.0.2:2', 'a');
    const b = await claimer('10.0.0.3:3', 'b');
    const [wonA, wonB] = await Promise.all([reclaimWorkerId(a.input), reclaimWorkerId(b.input)]);
    expect([wonA, wonB].filter((won) => won !== null)).toHaveLength(1);
    const winner = wonA ? 'a' : 'b';
    expect(await nodeRun()).toBe(winner);
    expect(await aliveHolder()).toBe(winner);
  });

  it('two claimers whose liveness nodes do not exclude each other (an expiry in between): the versioned write lets only one win', async () => {
    const a = await claimer('10.0.0.2:2', 'a');
    const b = await claimer('10.0.0.3:3', 'b');
    let wonB: Awaited<ReturnType<typeof reclaimWorkerId>> = null;
    // A holds the liveness node and has read version 0; before its write lands, its session
    // expires (the liveness node goes with it) and B claims the worker ID completely.
    a.zk.beforeSetData = async () => {
      a.zk.simulateExpiry();
      wonB = await reclaimWorkerId(b.input);
    };
    const wonA = await reclaimWorkerId(a.input);
    expect(wonB).not.toBeNull();
    expect(wonA).toBeNull();
    expect(await nodeRun()).toBe('b');
    expect(await aliveHolder()).toBe('b');
  });

  it('an expired session in the middle: a write that landed without the liveness node does not count, and the worker ID stays reclaimable', async () => {
    const a = await claimer('10.0.0.2:2', 'a');
    a.zk.beforeSetData = async () => {
      a.zk.simulateExpiry();
    };
    expect(await reclaimWorkerId(a.input)).toBeNull();
    // A's claim is in the node, but no one holds the liveness node: B may take it.
    expect(await nodeRun()).toBe('a');
    await expect(admin.getData(ALIVE)).rejects.toMatchObject({ zkCode: 'NO_NODE' });
    // The claim's write time counts as a lease too: B waits the margin past it.
    const b = await claimer('10.0.0.3:3', 'b');
    expect(await reclaimWorkerId(b.input)).toBeNull();
    clock.advance(2001);
    const wonB = await reclaimWorkerId(b.input);
    expect(wonB).not.toBeNull();
    expect(wonB!.registration.data).toMatchObject({ reservedUntil: T0, horizon: T0, run: 'b' });
  });

  it('a lost reply of a write that was applied: settled by reading the node again (won)', async () => {
    const a = await claimer('10.0.0.2:2', 'a');
    a.zk.loseSetDataReply = true;
    const won = await reclaimWorkerId(a.input);
    expect(won).not.toBeNull();
    expect(await nodeRun()).toBe('a');
    expect(await aliveHolder()).toBe('a');
  });

  it('a lost reply of a write that was not applied: lost, and the liveness node is released', async () => {
    const a = await claimer('10.0.0.2:2', 'a');
    a.zk.failNext('setData', 'CONNECTION_LOSS');
    expect(await reclaimWorkerId(a.input)).toBeNull();
    expect(await nodeRun()).toBe('old');
    await expect(admin.getData(ALIVE)).rejects.toMatchObject({ zkCode: 'NO_NODE' });
  });

  it('prefers a node this identity reclaimed before, then the oldest horizon', async () => {
    const ancient = JSON.stringify({
      ip: '10.0.0.9',
      port: 9,
      timestamp: T0 - 90_000,
      reservedUntil: T0 - 90_000,
      horizon: T0 - 90_000,
      run: 'older',
    });
    await admin.createPersistentSequential(`${PARENT}/10.0.0.9:9-`, Buffer.from(ancient));
    const first = await claimer('10.0.0.2:2', 'a');
    expect((await reclaimWorkerId(first.input))!.registration.sequence).toBe(1);
    await first.zk.close(); // its liveness node goes
    clock.advance(2001); // past the claim's write time + margin
    const again = await claimer('10.0.0.2:2', 'a2');
    expect((await reclaimWorkerId(again.input))!.registration.sequence).toBe(1);
  });
});
