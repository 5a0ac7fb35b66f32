import { LocalWorkerIdSource } from './local-worker-id.source';
import { ZookeeperWorkerIdSource } from './zookeeper-worker-id.source';
import { LeafErrorCode } from '../errors/leaf.error';
import { StartupClockBehindError } from '../errors/startup-clock-behind.error';
import { TimeLeaseUnavailableError } from '../errors/time-lease-unavailable.error';
import { WorkerIdExhaustedError } from '../errors/worker-id-exhausted.error';
import { WorkerIdInUseError } from '../errors/worker-id-in-use.error';
import { WorkerIdUnavailableError } from '../errors/worker-id-unavailable.error';
import { WorkerStateCorruptError } from '../errors/worker-state-corrupt.error';
import { DEFAULT_SNOWFLAKE_EPOCH, LEAF_LAYOUT } from './snowflake-layout';
import { LEAF_DEFAULTS } from '../leaf-defaults';
import type {
  SnowflakeSettings,
  WorkerReclaimMode,
  WorkerSourceSettings,
} from './snowflake-settings';
import { FakeClock } from '../../testing/fake-clock';
import { FakeZkClient } from '../../testing/fake-zk.client';
import { fillSequence } from '../../testing/zk-test-helpers';
import { SnowflakeLayout } from './snowflake-layout';
import { SnowflakeWorker } from './snowflake-worker';
import { InMemoryWorkerStateStores } from '../../testing/in-memory-worker-state.store';
import type { WorkerStateLockHandle } from './worker-state';

const T0 = 1_700_000_000_000;
const PARENT = '/snowflake/leaf/forever';
const alivePath = (workerId: number) => `/snowflake/leaf/alive/${workerId}`;
const layout = new SnowflakeLayout(1_288_834_974_657);

const flush = () => new Promise((resolve) => setImmediate(resolve));

describe('SnowflakeWorker', () => {
  let stores: InMemoryWorkerStateStores;
  let clock: FakeClock;
  let zk: FakeZkClient;
  const workers: SnowflakeWorker[] = [];

  beforeEach(async () => {
    stores = new InMemoryWorkerStateStores();
    clock = new FakeClock(T0);
    zk = new FakeZkClient();
  });
  afterEach(async () => {
    await Promise.all(workers.splice(0).map((worker) => worker.stop()));
    await zk.close();
  });

  /** Settings overrides: `advertise` as `ip:port`, or `workerId` for embedded mode. */
  type Overrides = Partial<SnowflakeSettings> & {
    advertise?: string;
    workerId?: number;
    reclaim?: WorkerReclaimMode;
    /** A StatefulSet ordinal source (worker ID 3 from `leaf-3`), guarded in ZooKeeper. */
    hostname?: string;
  };

  function options(snowflake: Overrides = {}, client: FakeZkClient | null = zk, name = 'leaf') {
    const { advertise = '10.0.0.8:8080', workerId, reclaim, hostname, ...rest } = snowflake;
    const [ip, port] = advertise.split(':');
    const workerSource: WorkerSourceSettings =
      hostname !== undefined
        ? {
            kind: 'ordinal',
            hostname,
            offset: 0,
            workerId: Number(hostname.split('-').pop()),
            zookeeper: { connect: 'fake:2181', connectTimeoutMs: 100, sessionTimeoutMs: 10_000 },
          }
        : workerId !== undefined
          ? { kind: 'embedded', workerId }
          : {
              kind: 'zookeeper',
              connect: 'fake:2181',
              connectTimeoutMs: 100,
              sessionTimeoutMs: 10_000,
              advertise: { ip: ip!, port: Number(port) },
              reclaim: reclaim ?? LEAF_DEFAULTS.snowflake.zookeeper.reclaim,
              reclaimMarginMs: LEAF_DEFAULTS.snowflake.zookeeper.reclaimMarginMs,
            };
    const settings: SnowflakeSettings = {
      epoch: DEFAULT_SNOWFLAKE_EPOCH,
      layout: LEAF_LAYOUT,
      dataCenterId: 0,
      stateDir: 'unused: in-memory stores',
      sequenceRandomBound: 100,
      clockBackwardsToleranceMs: 5,
      leaseMs: 10_000,
      heartbeatIntervalMs: 3000,
      startupMaxWaitMs: 15_000,
      localRunwayMs: 60_000,
      ...rest,
    };
    const source = workerSource;
    return {
      name,
      snowflake: settings,
      clock,
      source:
        source.kind === 'zookeeper'
          ? new ZookeeperWorkerIdSource(client!, source)
          : source.kind === 'ordinal'
            ? ZookeeperWorkerIdSource.forOrdinal(client!, source.zookeeper!, source)
            : new LocalWorkerIdSource(workerId!),
      stateStore: stores.factory,
      tickPollMs: 0,
    };
  }

  async function start(snowflake: Overrides = {}, client: FakeZkClient | null = zk, name = 'leaf') {
    const worker = await clock.drive(SnowflakeWorker.start(options(snowflake, client, name)));
    workers.push(worker);
    return worker;
  }

  /**
   * Simulates a crash: the worker is dropped without stop(). With ZooKeeper, its session is
   * over by the time the test goes on (unless `sessionEnded` is false): its liveness node is gone.
   */
  async function crash(worker: SnowflakeWorker, { sessionEnded = true } = {}): Promise<void> {
    workers.splice(workers.indexOf(worker), 1);
    worker.lease.revoke('crashed (test)');
    // The kernel releases a dead process's state lock.
    await (worker as unknown as { parts: { lock: WorkerStateLockHandle } }).parts.lock.release();
    if (sessionEnded && worker.mode !== 'embedded') await zk.delete(alivePath(worker.workerId));
  }

  const nodeData = async (nodePath: string) =>
    JSON.parse((await zk.getData(nodePath)).data.toString()) as Record<string, unknown>;
  const zkIdentity = (identity = { ip: '10.0.0.8', port: 8080 }) =>
    ({ kind: 'zookeeper', name: 'leaf', ...identity }) as const;
  const stateFile = (identity = { ip: '10.0.0.8', port: 8080 }) => stores.of(zkIdentity(identity));

  describe('with ZooKeeper', () => {
    it('registers a node, takes its sequence as worker ID and records the lease in the node and the state file', async () => {
      await zk.connect(100);
      await zk.mkdirp(PARENT);
      await zk.createPersistentSequential(
        `${PARENT}/10.0.0.1:1-`,
        Buffer.from('{"ip":"10.0.0.1","port":1,"timestamp":1}'),
      );
      const worker = await start();
      expect(worker.workerId).toBe(1);
      expect(worker.snapshot()).toMatchObject({
        mode: 'zookeeper',
        nodePath: `${PARENT}/10.0.0.8:8080-0000000001`,
        startupWaitMs: 0,
      });
      expect(await nodeData(`${PARENT}/10.0.0.8:8080-0000000001`)).toEqual({
        ip: '10.0.0.8',
        port: 8080,
        timestamp: T0,
        reservedUntil: T0 + 10_000,
        horizon: T0 + 60_000, // localRunwayMs after the write
        run: worker.run,
      });
      expect(await stateFile().read()).toMatchObject({
        status: 'ok',
        state: {
          workerId: 1,
          reservedUntil: T0 + 10_000,
          zkNode: `${PARENT}/10.0.0.8:8080-0000000001`,
          zkSyncedAt: T0,
        },
      });
      const id = await worker.generator.next();
      expect(layout.decode(id)).toMatchObject({ workerId: 1, timestamp: T0 });
    });

    it('gives five instances starting at once five distinct worker IDs equal to their node sequences', async () => {
      const clients = Array.from({ length: 5 }, () => zk);
      const started = await Promise.all(
        clients.map((client, i) =>
          clock.drive(
            SnowflakeWorker.start(options({ advertise: `10.0.0.${i + 10}:8080` }, client)),
          ),
        ),
      );
      workers.push(...started);
      const ids = started.map((worker) => worker.workerId).sort();
      expect(ids).toEqual([0, 1, 2, 3, 4]);
      for (const worker of started) {
        expect(worker.snapshot().nodePath).toMatch(
          new RegExp(`-${String(worker.workerId).padStart(10, '0')}$`),
        );
      }
    });

    it('reuses the worker ID of the same ip:port after a restart', async () => {
      const first = await start();
      await first.stop();
      workers.splice(0);
      clock.advance(10);
      const second = await start();
      expect(second.workerId).toBe(first.workerId);
      expect(zk.paths().filter((p) => p.startsWith(`${PARENT}/`))).toHaveLength(1);
    });

    it('never repeats an ID across a crash and a restart with the clock set back: the lease forces a wait', async () => {
      const first = await start();
      const before = await clock.drive(first.generator.take(5000), 1);
      const lastBefore = before[before.length - 1]!;
      await crash(first);
      clock.set(T0 + 3); // the clock went back below the IDs already issued
      const second = await start({ startupMaxWaitMs: 20_000 });
      expect(second.workerId).toBe(first.workerId);
      expect(second.snapshot().startupWaitMs).toBeGreaterThanOrEqual(9_997);
      expect(clock.now()).toBeGreaterThan(T0 + 10_000);
      const after = await second.generator.take(10);
      expect(after[0]! > lastBefore).toBe(true);
      expect(layout.decode(after[0]!).timestamp).toBeGreaterThan(T0 + 10_000);
    });

    it('refuses to start when the clock is behind the lease by more than startupMaxWaitMs', async () => {
      const first = await start();
      await crash(first);
      clock.set(T0 - 60_000);
      const error = await clock.drive(SnowflakeWorker.start(options())).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(StartupClockBehindError);
      expect(error).toMatchObject({
        code: LeafErrorCode.STARTUP_CLOCK_BEHIND,
        workerId: 0,
        bound: T0 + 10_000,
        now: T0 - 60_000,
        offsetMs: 70_001,
        maxWaitMs: 15_000,
      });
      expect((error as Error).message).toMatch(/refuses to start.*NTP/);
      expect(clock.pendingSleeps).toBe(0);
    });

    it('after a graceful stop lowers the lease to the last millisecond used, so a restart need not wait', async () => {
      const first = await start();
      await first.generator.next();
      clock.advance(5);
      await first.generator.next();
      await first.stop();
      workers.splice(0);
      expect(await nodeData(`${PARENT}/10.0.0.8:8080-0000000000`)).toMatchObject({
        reservedUntil: T0 + 5,
      });
      clock.advance(1);
      const second = await start();
      expect(second.snapshot()).toMatchObject({ startupBound: T0 + 5, startupWaitMs: 0 });
    });

    it('without a usable state file, assumes the previous run used its local runway', async () => {
      const first = await start();
      await crash(first);
      stores.remove(zkIdentity());
      clock.advance(20_000);
      const error = await clock.drive(SnowflakeWorker.start(options())).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(StartupClockBehindError);
      expect(error).toMatchObject({ bound: T0 + 60_000 });
      expect((error as StartupClockBehindError).source).toContain('horizon');
      clock.advance(30_000); // within startupMaxWaitMs of the bound now
      const second = await start();
      expect(second.workerId).toBe(0);
    });

    it('treats a node written by the Java Leaf as leased until one heartbeat after its timestamp', async () => {
      await zk.connect(100);
      await zk.mkdirp(PARENT);
      await zk.createPersistentSequential(
        `${PARENT}/10.0.0.8:8080-`,
        Buffer.from(`{"ip":"10.0.0.8","port":"8080","timestamp":${T0}}`),
      );
      await stateFile().write({
        workerId: 0,
        reservedUntil: 0,
        zkNode: `${PARENT}/10.0.0.8:8080-0000000000`,
        zkSyncedAt: null,
        zkHorizon: null,
        run: null,
        updatedAt: 0,
      });
      const worker = await start();
      expect(worker.snapshot()).toMatchObject({ startupBound: T0 + 3000 });
      expect(clock.now()).toBeGreaterThan(T0 + 3000);
    });

    it('adopts the node of a create whose answer was lost', async () => {
      zk.loseResponseOfNextCreate();
      const worker = await start();
      expect(worker.workerId).toBe(0);
      expect(zk.paths().filter((p) => p.startsWith(`${PARENT}/`))).toEqual([
        `${PARENT}/10.0.0.8:8080-0000000000`,
      ]);
    });

    it('accepts worker ID 1023 and refuses 1024 (reclaim: never), without taking it modulo', async () => {
      await zk.connect(100);
      await fillSequence(zk, PARENT, 1023);
      const last = await start({ advertise: '10.0.0.9:8080' });
      expect(last.workerId).toBe(1023);
      const error = await clock
        .drive(SnowflakeWorker.start(options({ reclaim: 'never' })))
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(WorkerIdExhaustedError);
      expect(error).toMatchObject({
        code: LeafErrorCode.WORKER_ID_EXHAUSTED,
        sequence: 1024,
        identity: '10.0.0.8:8080',
      });
      expect((error as Error).message).toMatch(/LEAF_SNOWFLAKE_ADVERTISE.*retired instance/);
      // The same identity is refused again on restart (its node keeps sequence 1024).
      await expect(
        clock.drive(SnowflakeWorker.start(options({ reclaim: 'never' }))),
      ).rejects.toBeInstanceOf(WorkerIdExhaustedError);
      // With reclaim, nothing is reclaimable either (the filler nodes hold no lease record,
      // 1023 is alive): refused after the start-up wait, and the useless node is deleted.
      const again = await clock
        .drive(SnowflakeWorker.start(options({ advertise: '10.0.0.7:1' })))
        .catch((e: unknown) => e);
      expect(again).toBeInstanceOf(WorkerIdExhaustedError);
      expect((again as Error).message).toMatch(/none of them became reclaimable/);
      expect(zk.paths().some((p) => p.includes('10.0.0.7:1-'))).toBe(false);
    });

    it('works with a leaf name containing "-"', async () => {
      const worker = await start({}, zk, 'order-ids');
      expect(worker.snapshot().nodePath).toBe(
        '/snowflake/order-ids/forever/10.0.0.8:8080-0000000000',
      );
      expect(worker.snapshot().stateFile).toContain('snowflake-order-ids-10.0.0.8_8080.json');
    });

    it('after a session expiry resumes the heartbeat on the same node', async () => {
      const worker = await start();
      const nodePath = worker.snapshot().nodePath!;
      const { version } = await zk.getData(nodePath);
      zk.simulateExpiry();
      await flush();
      await worker.lease.pending;
      clock.advance(3000);
      await worker.heartbeat();
      expect((await zk.getData(nodePath)).version).toBeGreaterThanOrEqual(version + 2);
      expect(await nodeData(nodePath)).toMatchObject({
        timestamp: T0 + 3000,
        reservedUntil: T0 + 13_000,
      });
      expect(zk.paths().filter((p) => p.startsWith(`${PARENT}/`))).toEqual([nodePath]);
      expect(worker.readiness()).toEqual({ ready: true, reason: null });
    });

    it('stops issuing at once when its node disappears, instead of riding out the local runway', async () => {
      const worker = await start();
      const nodePath = worker.snapshot().nodePath!;
      await worker.generator.next();
      // An operator deletes the namespace (or ZooKeeper lost its data): sequence 0 is free again.
      await zk.delete(nodePath);
      clock.advance(3000);
      await worker.heartbeat().catch(() => undefined);
      expect(worker.lease.snapshot().revoked).toMatch(/no longer exists/);
      clock.advance(1);
      await expect(worker.generator.next()).rejects.toBeInstanceOf(TimeLeaseUnavailableError);
      expect(worker.readiness().ready).toBe(false);
    });

    it('never lowers the bound recorded in its node when the clock is stepped back', async () => {
      const worker = await start();
      const nodePath = worker.snapshot().nodePath!;
      clock.advance(3000);
      await worker.heartbeat();
      expect(await nodeData(nodePath)).toMatchObject({ reservedUntil: T0 + 13_000 });
      // NTP steps the clock back two minutes: the next heartbeat's target is far below.
      clock.set(T0 - 120_000);
      await worker.heartbeat().catch(() => undefined);
      expect((await nodeData(nodePath)).reservedUntil).toBeGreaterThanOrEqual(T0 + 13_000);
    });

    it('with ZooKeeper lost at runtime extends locally within the runway, then fails closed, and catches up on reconnect', async () => {
      const worker = await start({ localRunwayMs: 20_000 });
      const nodePath = worker.snapshot().nodePath!;
      zk.simulateDisconnect();
      clock.advance(3000);
      await worker.heartbeat(); // local only: T0 + 13 s
      expect(worker.lease.reservedUntil).toBe(T0 + 13_000);
      expect(await stateFile().read()).toMatchObject({
        state: { reservedUntil: T0 + 13_000, zkSyncedAt: T0 },
      });
      clock.advance(12_000);
      await worker.heartbeat(); // capped at the last ZooKeeper write + 20 s
      expect(worker.lease.reservedUntil).toBe(T0 + 20_000);
      clock.set(T0 + 20_000);
      const atBound = await worker.generator.next();
      expect(layout.decode(atBound).timestamp).toBe(T0 + 20_000);

      clock.advance(1);
      const error = await worker.generator.next().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(TimeLeaseUnavailableError);
      expect((error as Error).message).toMatch(/runway/);
      expect(worker.readiness().ready).toBe(false);
      expect(worker.generator.snapshot().lastTimestamp).toBe(T0 + 20_000); // nothing past the bound

      zk.simulateReconnect();
      await flush();
      await worker.lease.pending;
      expect(await nodeData(nodePath)).toMatchObject({
        timestamp: T0 + 20_001,
        reservedUntil: T0 + 30_001,
      });
      expect(worker.readiness().ready).toBe(true);
      expect(await worker.generator.next()).toBeGreaterThan(atBound);
    });
  });

  describe('liveness guard (/snowflake/{name}/alive/{workerId})', () => {
    it('holds an ephemeral node with its identity while running; a graceful stop deletes it, so a restart need not wait', async () => {
      const first = await start();
      expect(first.snapshot().zookeeper).toMatchObject({ alive: true });
      expect(await nodeData(alivePath(0))).toEqual({
        identity: '10.0.0.8:8080',
        pid: process.pid,
        startedAt: T0,
        run: first.run,
      });
      await first.stop();
      workers.splice(0);
      expect(zk.paths()).not.toContain(alivePath(0));
      clock.advance(1);
      const second = await start();
      expect(second.workerId).toBe(0);
      expect(clock.now()).toBe(T0 + 1); // no wait at all
      expect(zk.paths()).toContain(alivePath(0));
    });

    it('refuses a second live process advertising the same identity once a session timeout (+ margin) has passed', async () => {
      const first = await start();
      const holder = (await zk.getData(alivePath(0))).data.toString();
      // Another host: its own state directory, so only the liveness node can tell.
      const otherHost = { ...options(), stateStore: new InMemoryWorkerStateStores().factory };
      const error = await clock.drive(SnowflakeWorker.start(otherHost)).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(WorkerIdInUseError);
      expect(error).toMatchObject({
        code: LeafErrorCode.WORKER_ID_IN_USE,
        workerId: 0,
        identity: '10.0.0.8:8080',
        alivePath: alivePath(0),
        holder,
        waitedMs: 12_000, // sessionTimeoutMs 10 s + 2 s
      });
      expect((error as Error).message).toMatch(
        /Another live process holds snowflake worker ID 0 for identity 10\.0\.0\.8:8080.*LEAF_SNOWFLAKE_ADVERTISE/,
      );
      expect(clock.now()).toBeGreaterThanOrEqual(T0 + 12_000);
      expect(clock.pendingSleeps).toBe(0);
      // The first one keeps its node and keeps working.
      expect((await zk.getData(alivePath(0))).data.toString()).toBe(holder);
      await first.heartbeat();
      expect(first.readiness()).toEqual({ ready: true, reason: null });
    });

    it("starts once a crashed predecessor's node disappears within the wait, from the lease recorded meanwhile", async () => {
      const first = await start();
      await first.generator.next();
      await crash(first, { sessionEnded: false });
      const nodePath = `${PARENT}/10.0.0.8:8080-0000000000`;
      // 4 s later the old session times out; it had extended its lease just before.
      void clock.sleep(4000).then(async () => {
        await zk.setData(
          nodePath,
          Buffer.from(
            JSON.stringify({ ...(await nodeData(nodePath)), reservedUntil: T0 + 14_000 }),
          ),
        );
        await zk.delete(alivePath(0));
      });
      const second = await start();
      expect(second.workerId).toBe(0);
      expect(second.snapshot()).toMatchObject({
        startupBound: T0 + 14_000,
        zookeeper: { alive: true },
      });
      expect(clock.now()).toBeGreaterThan(T0 + 14_000);
      expect(layout.decode(await second.generator.next()).timestamp).toBeGreaterThan(T0 + 14_000);
    });

    it('after a session expiry extends nothing, not even locally, until its liveness node is held again', async () => {
      const worker = await start();
      await worker.generator.next();
      const before = worker.lease.reservedUntil;
      zk.setUnavailable(true); // the new session cannot be opened yet
      zk.simulateExpiry();
      await flush();
      expect(worker.snapshot().zookeeper).toMatchObject({
        alive: false,
        fenced: expect.stringMatching(/session .*expired/),
      });
      clock.advance(2000);
      await expect(worker.heartbeat()).rejects.toBeInstanceOf(TimeLeaseUnavailableError);
      expect(worker.lease.reservedUntil).toBe(before);
      expect(await stateFile().read()).toMatchObject({ state: { reservedUntil: before } });
      // IDs within the lease already durable stay valid; past it, nothing.
      await worker.generator.next();
      clock.advance(before - clock.now() + 1);
      await expect(worker.generator.next()).rejects.toBeInstanceOf(TimeLeaseUnavailableError);
      // A mere disconnection is not fenced: back with the node held, the lease grows again.
      zk.setUnavailable(false);
      await flush();
      await worker.lease.pending;
      await worker.heartbeat();
      expect(worker.snapshot().zookeeper).toMatchObject({ alive: true, fenced: null });
      expect(worker.lease.reservedUntil).toBeGreaterThan(before);
      await worker.generator.next();
    });

    /**
     * A started worker that issued one ID, then lost its session: `onNewSession` runs once when
     * the next session is connected, before the worker sees it (subscribed first).
     */
    const workerAfterExpiry = async (onNewSession: () => void) => {
      let armed = false;
      zk.onStateChange((state) => {
        if (state !== 'connected' || !armed) return;
        armed = false;
        onNewSession();
      });
      const worker = await start();
      await worker.generator.next();
      armed = true;
      zk.simulateExpiry();
      return worker;
    };

    it('after a session expiry stops for good when another run wrote the worker node meanwhile', async () => {
      const nodePath = `${PARENT}/10.0.0.8:8080-0000000000`;
      // Subscribed before the worker: a successor took the worker ID, wrote its lease and
      // ended before this run's new session came up.
      const worker = await workerAfterExpiry(() => {
        void nodeData(nodePath).then((data) =>
          zk.setData(nodePath, Buffer.from(JSON.stringify({ ...data, run: 'successor' }))),
        );
      });
      await flush();
      await flush();
      await flush();
      expect(worker.lease.snapshot().revoked).toMatch(/written by another run \(successor\)/);
      // Not even within the millisecond already started.
      expect(worker.generator.tryNext()).toBeUndefined();
      await expect(clock.drive(worker.generator.next())).rejects.toBeInstanceOf(
        TimeLeaseUnavailableError,
      );
      expect(worker.readiness().ready).toBe(false);
    });

    it('re-creates its node after a session expiry', async () => {
      const worker = await start();
      zk.simulateExpiry();
      await flush();
      await worker.lease.pending;
      expect(zk.paths()).toContain(alivePath(0));
      expect(worker.snapshot().zookeeper).toMatchObject({ connected: true, alive: true });
      expect(worker.readiness()).toEqual({ ready: true, reason: null });
    });

    it('stops issuing when, after a session expiry, another process holds the worker ID', async () => {
      // Subscribed before the worker: runs first when the new session is connected.
      const worker = await workerAfterExpiry(() => {
        void zk.createEphemeral(
          alivePath(0),
          Buffer.from('{"identity":"10.0.0.8:8080","pid":4242,"startedAt":1}'),
        );
      });
      await flush();
      await flush();
      expect(worker.lease.snapshot().revoked).toMatch(
        /another live process holds worker ID 0 for 10\.0\.0\.8:8080.*4242/,
      );
      clock.advance(1);
      await expect(worker.generator.next()).rejects.toBeInstanceOf(TimeLeaseUnavailableError);
      expect(worker.readiness().ready).toBe(false);
      // Its stop leaves the other process's node alone.
      await worker.stop();
      expect(JSON.parse((await zk.getData(alivePath(0))).data.toString())).toMatchObject({
        pid: 4242,
      });
    });

    it('deletes its node when start-up refuses later (clock behind the lease)', async () => {
      const first = await start();
      await crash(first);
      clock.set(T0 - 60_000);
      await expect(clock.drive(SnowflakeWorker.start(options()))).rejects.toBeInstanceOf(
        StartupClockBehindError,
      );
      expect(zk.paths()).not.toContain(alivePath(0));
    });
  });

  describe('reclaim (a new identity at every start, as in a Deployment)', () => {
    const small = { timestampBits: 41, dataCenterBits: 0, workerBits: 3, sequenceBits: 12 };

    it('40 crash/start cycles with 8 worker IDs never exhaust the namespace and never repeat an ID', async () => {
      const issued = new Set<bigint>();
      let count = 0;
      for (let cycle = 0; cycle < 40; cycle++) {
        const worker = await start({
          advertise: `10.1.0.${cycle}:80`,
          layout: small,
          localRunwayMs: 0,
        });
        expect(worker.workerId).toBeLessThanOrEqual(7);
        for (let i = 0; i < 20; i++) {
          issued.add(await clock.drive(worker.generator.next()));
          count++;
        }
        await crash(worker);
      }
      expect(issued.size).toBe(count);
      expect(zk.paths().filter((p) => p.startsWith(`${PARENT}/`))).toHaveLength(8);
    });

    it("'always' reclaims before consuming a fresh sequence", async () => {
      const first = await start({ advertise: '10.1.0.1:80', reclaim: 'always' });
      await crash(first);
      clock.advance(10_000 + 60_000 + 2001); // past its horizon (lease + runway) + margin
      const second = await start({ advertise: '10.1.0.2:80', reclaim: 'always' });
      expect(second.workerId).toBe(first.workerId);
      expect(second.snapshot().startupBoundSource).toMatch(/horizon/);
      expect(zk.paths().filter((p) => p.startsWith(`${PARENT}/`))).toHaveLength(1);
    });

    it('a worker ID it reclaimed is confirmed after a start from the state file with ZooKeeper down', async () => {
      const first = await start({ advertise: '10.1.0.1:80', reclaim: 'always' });
      await first.stop();
      clock.advance(2001);
      const second = await start({ advertise: '10.1.0.2:80', reclaim: 'always' });
      expect(second.workerId).toBe(first.workerId);
      await crash(second); // its state file keeps the runway a ZooKeeper-down start needs
      zk.setUnavailable(true);
      const again = await start({ advertise: '10.1.0.2:80', reclaim: 'always' });
      expect(again.snapshot().zookeeper).toMatchObject({ verified: false });
      zk.setUnavailable(false);
      await flush();
      await again.heartbeat();
      expect(again.snapshot().zookeeper).toMatchObject({ verified: true, alive: true });
      expect(again.readiness()).toEqual({ ready: true, reason: null });
    });

    it('a returning holder finds its worker ID taken and stops issuing at its next renewal (self-fencing)', async () => {
      const zkA = zk.newSession();
      const zkB = zk.newSession();
      const a = await start({ advertise: '10.1.0.1:80', localRunwayMs: 0 }, zkA);
      const fromA = await a.generator.next();
      // A is cut off (paused, partitioned); its session ends on the server.
      zkA.setUnavailable(true);
      await zk.connect(100);
      await zk.delete(alivePath(a.workerId));
      clock.advance(10_000 + 2001); // A's horizon (= its lease, runway 0) + margin
      const b = await start({ advertise: '10.1.0.2:80', reclaim: 'always', localRunwayMs: 0 }, zkB);
      expect(b.workerId).toBe(a.workerId);
      const fromB = await b.generator.next();
      expect(fromB).toBeGreaterThan(fromA);
      // A comes back: its first write is refused (the node's version moved on), it sees B's run.
      zkA.setUnavailable(false);
      await a.lease.pending;
      await flush();
      await a.heartbeat().catch(() => undefined);
      expect(a.lease.snapshot().revoked).toMatch(/taken over by 10\.1\.0\.2:80/);
      expect(a.readiness().ready).toBe(false);
      await expect(a.generator.next()).rejects.toBeInstanceOf(TimeLeaseUnavailableError);
      // B goes on.
      expect(await b.generator.next()).toBeGreaterThan(fromB);
    });
  });

  describe('StatefulSet ordinal guarded by ZooKeeper', () => {
    it('a copied pod (same host name, its own volume) refuses while the original lives; without the volume a successor waits past the horizon', async () => {
      const zkA = zk.newSession();
      const zkB = zk.newSession();
      const original = await start({ hostname: 'leaf-3' }, zkA);
      expect(original.workerId).toBe(3);
      expect(original.mode).toBe('ordinal');
      expect(original.snapshot().nodePath).toBe('/snowflake/leaf/ordinal/3');
      const last = await original.generator.next();
      // The copy has its own (empty) state volume: only ZooKeeper can tell.
      stores = new InMemoryWorkerStateStores();
      const copy = await clock
        .drive(SnowflakeWorker.start(options({ hostname: 'leaf-3' }, zkB)))
        .catch((e: unknown) => e);
      expect(copy).toBeInstanceOf(WorkerIdInUseError);
      // The original crashes; a pod that lost its volume waits past the original's horizon.
      await zk.connect(100);
      await crash(original);
      const successor = await start({ hostname: 'leaf-3', startupMaxWaitMs: 90_000 }, zkB);
      expect(successor.snapshot().startupBoundSource).toMatch(/horizon/);
      expect(await successor.generator.next()).toBeGreaterThan(last);
    });
  });

  describe('with ZooKeeper unreachable at start', () => {
    /** A run that crashed; then ZooKeeper (the same one, or an empty one) becomes unreachable. */
    async function previousRun({ sameZooKeeper = false } = {}) {
      const first = await start();
      await first.generator.next();
      await crash(first);
      if (!sameZooKeeper) {
        await zk.close();
        zk = new FakeZkClient();
      }
      zk.setUnavailable(true);
    }

    /**
     * A worker started from the previous run's state file while ZooKeeper was down, that issued
     * one ID; `meanwhile` changed ZooKeeper before it came back.
     */
    async function workerAfterOutage(meanwhile: () => Promise<unknown>) {
      await previousRun({ sameZooKeeper: true });
      zk.setUnavailable(false);
      await meanwhile();
      zk.setUnavailable(true);
      const worker = await start();
      await worker.generator.next();
      zk.setUnavailable(false);
      return worker;
    }

    it('starts from a valid state file after the time check, and confirms the registration later', async () => {
      await previousRun({ sameZooKeeper: true });
      const worker = await start();
      expect(worker.workerId).toBe(0);
      expect(worker.snapshot()).toMatchObject({
        startupBound: T0 + 10_000,
        zookeeper: { connected: false, verified: false },
      });
      expect(clock.now()).toBeGreaterThan(T0 + 10_000);
      const id = await worker.generator.next();
      expect(layout.decode(id).timestamp).toBeGreaterThan(T0 + 10_000);

      zk.setUnavailable(false);
      await flush();
      await flush();
      await worker.lease.pending;
      expect(worker.snapshot().zookeeper).toMatchObject({
        connected: true,
        verified: true,
        alive: true,
      });
      expect(await nodeData(`${PARENT}/10.0.0.8:8080-0000000000`)).toMatchObject({
        reservedUntil: worker.lease.reservedUntil,
      });
      expect(await nodeData(alivePath(0))).toMatchObject({
        identity: '10.0.0.8:8080',
        pid: process.pid,
      });
    });

    it('stops issuing when ZooKeeper, once back, shows another live process holding the worker ID', async () => {
      const worker = await workerAfterOutage(async () => {
        await zk.mkdirp('/snowflake/leaf/alive');
        await zk.createEphemeral(
          alivePath(0),
          Buffer.from('{"identity":"10.0.0.8:8080","pid":4242,"startedAt":1}'),
        );
      });
      await flush();
      await flush();
      await flush();
      expect(worker.lease.snapshot().revoked).toMatch(
        /another live process holds worker ID 0 for 10\.0\.0\.8:8080.*4242.*LEAF_SNOWFLAKE_ADVERTISE/,
      );
      expect(worker.snapshot().zookeeper).toMatchObject({ verified: true, alive: false });
      clock.advance(1);
      await expect(worker.generator.next()).rejects.toBeInstanceOf(TimeLeaseUnavailableError);
    });

    it('refuses when the state file is behind the clock by more than startupMaxWaitMs', async () => {
      await previousRun();
      clock.set(T0 - 30_000);
      const error = await clock.drive(SnowflakeWorker.start(options())).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(StartupClockBehindError);
      expect((error as StartupClockBehindError).source).toContain('ZooKeeper unreachable');
    });

    it('refuses a corrupt state file', async () => {
      await previousRun();
      stores.setRaw(zkIdentity(), '{"version":1,');
      const error = await clock.drive(SnowflakeWorker.start(options())).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(WorkerStateCorruptError);
      expect(error).toMatchObject({ code: LeafErrorCode.WORKER_STATE_CORRUPT });
      expect((error as Error).message).toMatch(
        /not valid JSON.*ZooKeeper at fake:2181 is unreachable/,
      );
    });

    it('refuses a state file copied from another identity', async () => {
      await previousRun();
      stores.setRaw(zkIdentity({ ip: '10.0.0.9', port: 8080 }), stores.raw(zkIdentity())!);
      const error = await clock
        .drive(SnowflakeWorker.start(options({ advertise: '10.0.0.9:8080' })))
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(WorkerStateCorruptError);
      expect((error as Error).message).toContain('copied from another host');
    });

    it('refuses without a state file', async () => {
      zk.setUnavailable(true);
      const error = await clock.drive(SnowflakeWorker.start(options())).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(WorkerIdUnavailableError);
      expect(error).toMatchObject({ code: LeafErrorCode.WORKER_ID_UNAVAILABLE });
      expect((error as Error).message).toMatch(/unreachable.*no state file/);
    });

    it('refuses when the local runway since the last ZooKeeper write is used up', async () => {
      await previousRun();
      clock.advance(61_000);
      const error = await clock.drive(SnowflakeWorker.start(options())).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(TimeLeaseUnavailableError);
      expect((error as Error).message).toMatch(/runway/);
    });

    it('stops issuing when ZooKeeper, once back, records a later lease than the stale state file it started from', async () => {
      await previousRun({ sameZooKeeper: true });
      zk.setUnavailable(false);
      const nodePath = `${PARENT}/10.0.0.8:8080-0000000000`;
      // The state file is older than the node (a restored snapshot, say).
      const data = await nodeData(nodePath);
      await zk.setData(
        nodePath,
        Buffer.from(JSON.stringify({ ...data, reservedUntil: T0 + 40_000 })),
      );
      zk.setUnavailable(true);
      const worker = await start();
      expect(worker.snapshot().startupBound).toBe(T0 + 10_000);
      zk.setUnavailable(false);
      await flush();
      await flush();
      await flush();
      expect(worker.lease.snapshot().revoked).toMatch(/state file is stale/);
      clock.advance(1);
      await expect(worker.generator.next()).rejects.toBeInstanceOf(TimeLeaseUnavailableError);
    });

    it('stops issuing for good when ZooKeeper, once back, no longer assigns that worker ID to this identity', async () => {
      const worker = await workerAfterOutage(() => zk.delete(`${PARENT}/10.0.0.8:8080-0000000000`));
      await flush();
      await flush();
      expect(worker.lease.snapshot().revoked).toMatch(/no node for 10\.0\.0\.8:8080/);
      clock.advance(1);
      await expect(worker.generator.next()).rejects.toBeInstanceOf(TimeLeaseUnavailableError);
      expect(worker.readiness().ready).toBe(false);
    });
  });

  describe('embedded (no ZooKeeper)', () => {
    const embedded = { workerId: 42 };

    it('uses the configured worker ID and keeps the lease in the state file', async () => {
      const worker = await start(embedded, null);
      expect(worker.workerId).toBe(42);
      expect(worker.mode).toBe('embedded');
      const file = stores.of({ kind: 'embedded', name: 'leaf', workerId: 42 });
      expect(await file.read()).toMatchObject({
        status: 'ok',
        state: { workerId: 42, reservedUntil: T0 + 10_000, zkNode: null },
      });
      expect(layout.decode(await worker.generator.next()).workerId).toBe(42);
      clock.advance(3000);
      await worker.heartbeat();
      expect(worker.lease.reservedUntil).toBe(T0 + 13_000);
    });

    it('after a crash waits for the lease before issuing again', async () => {
      const first = await start(embedded, null);
      const before = await first.generator.next();
      await crash(first);
      clock.set(T0 + 1);
      const second = await start(embedded, null);
      expect(second.snapshot().startupWaitMs).toBeGreaterThanOrEqual(9_999);
      expect(await second.generator.next()).toBeGreaterThan(before);
    });

    it('refuses a corrupt state file', async () => {
      stores.setRaw({ kind: 'embedded', name: 'leaf', workerId: 42 }, 'nope');
      await expect(
        clock.drive(SnowflakeWorker.start(options(embedded, null))),
      ).rejects.toBeInstanceOf(WorkerStateCorruptError);
    });
  });
});
