/**
 * Snowflake mode against a real ZooKeeper (LEAF_ZK_ADDRESS, default 127.0.0.1:2181), through
 * LeafModule with the real ZooKeeper client.
 *
 * Every run uses its own namespaces (`/snowflake/e2e-sf-<random>`, names with '-') and
 * deletes them at the end. The shared server is never stopped: "ZooKeeper down at start"
 * uses an address nothing listens on, and the session expiry is produced by a TCP proxy
 * owned by the test that refuses the client for longer than its session can live.
 */
import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { INestApplicationContext, LoggerService } from '@nestjs/common';
import { ScheduleModule } from '@nestjs/schedule';
import { Test } from '@nestjs/testing';
import {
  LeafErrorCode,
  LeafModule,
  SnowflakeService,
  type LeafSnowflakeOptions,
} from 'nestjs-leaf';
import {
  StartupClockBehindError,
  WorkerIdExhaustedError,
  WorkerIdInUseError,
  WorkerIdUnavailableError,
  WorkerStateCorruptError,
  WorkerStateLockedError,
  TimeLeaseUnavailableError,
} from 'nestjs-leaf/errors';
import { type ZkClientFactory } from 'nestjs-leaf/ports';
import { LEAF_ZK_CLIENT_FACTORY } from '@app/leaf/nest/leaf.constants';
import { ZookeeperClient } from '@app/leaf/adapters/zookeeper/zookeeper.client';
import { eventually } from '@app/leaf/testing/eventually';
import { TcpProxy } from './support/tcp-proxy';
import { deleteTree } from './support/zookeeper';
import { fillSequence } from '@app/leaf/testing/zk-test-helpers';
import {
  describeWithServices,
  zookeeperConnectString,
  zookeeperEndpoint,
} from './support/services';

const silent: LoggerService = {
  log: () => undefined,
  warn: () => undefined,
  error: () => undefined,
};

describeWithServices(['zookeeper'], 'snowflake mode against ZooKeeper', () => {
  const run = randomBytes(4).toString('hex');
  const name = `e2e-sf-${run}`;
  const forever = `/snowflake/${name}/forever`;
  const apps = new Set<INestApplicationContext>();
  let admin: ZookeeperClient;
  let stateDir: string;

  beforeAll(async () => {
    stateDir = await fs.mkdtemp(join(tmpdir(), 'leaf-sf-e2e-'));
    admin = new ZookeeperClient({ connect: zookeeperConnectString(), sessionTimeoutMs: 10_000 });
    await admin.connect(5000);
  });

  afterAll(async () => {
    await Promise.all([...apps].map((app) => app.close()));
    for (const namespace of [name, `${name}-full`, `${name}-expiry`])
      await deleteTree(admin, `/snowflake/${namespace}`);
    await admin.close();
    await fs.rm(stateDir, { recursive: true, force: true });
  });

  async function boot(
    snowflake: LeafSnowflakeOptions,
    options: { name?: string; factory?: ZkClientFactory } = {},
  ): Promise<INestApplicationContext> {
    let builder = Test.createTestingModule({
      imports: [
        ScheduleModule.forRoot(),
        LeafModule.forRoot({
          name: options.name ?? name,
          segment: false,
          snowflake: {
            zookeeper: { connect: zookeeperConnectString(), connectTimeoutMs: 3000 },
            stateDir,
            heartbeatIntervalMs: 200,
            leaseMs: 1000,
            ...snowflake,
          },
        }),
      ],
    });
    if (options.factory)
      builder = builder.overrideProvider(LEAF_ZK_CLIENT_FACTORY).useValue(options.factory);
    const moduleRef = await builder.setLogger(silent).compile();
    const app = await moduleRef.init();
    apps.add(app);
    return app;
  }

  async function close(app: INestApplicationContext): Promise<void> {
    apps.delete(app);
    await app.close();
  }

  const nodeData = async (path: string) =>
    JSON.parse((await admin.getData(path)).data.toString()) as Record<string, number | string>;
  const stateFileOf = (ip: string, port = 8080, ns = name) =>
    join(stateDir, `snowflake-${ns}-${ip}_${port}.json`);

  it('gives five generators starting at once on an empty namespace five distinct worker IDs equal to their node sequences', async () => {
    const started = await Promise.all(
      [1, 2, 3, 4, 5].map((i) => boot({ advertise: `10.0.0.${i}:8080` })),
    );
    const services = started.map((app) => app.get(SnowflakeService));
    expect(services.map((s) => s.workerId).sort()).toEqual([0, 1, 2, 3, 4]);

    const children = (await admin.getChildren(forever)).sort();
    expect(children).toHaveLength(5);
    for (const [i, service] of services.entries()) {
      const nodePath = service.status().worker!.nodePath!;
      expect(nodePath).toBe(
        `${forever}/10.0.0.${i + 1}:8080-${String(service.workerId).padStart(10, '0')}`,
      );
      expect(await nodeData(nodePath)).toMatchObject({
        ip: `10.0.0.${i + 1}`,
        port: 8080,
        reservedUntil: expect.any(Number),
      });
    }

    const batches = await Promise.all(services.map((service) => service.getIds('k', 1000)));
    const all = batches.flat();
    expect(new Set(all.map(String)).size).toBe(5000);
    for (const [i, batch] of batches.entries()) {
      expect(new Set(batch.map((id) => services[i]!.decode(id).workerId))).toEqual(
        new Set([services[i]!.workerId]),
      );
    }
    await Promise.all(started.map(close));
  });

  it('reuses the worker ID of the same ip:port on restart, and heartbeats keep its node current', async () => {
    const before = (await admin.getChildren(forever)).length;
    const node = (await admin.getChildren(forever)).find((child) =>
      child.startsWith('10.0.0.3:8080-'),
    )!;
    const app = await boot({ advertise: '10.0.0.3:8080' });
    const service = app.get(SnowflakeService);
    expect(service.workerId).toBe(Number(node.slice(node.lastIndexOf('-') + 1)));
    // The previous run stopped gracefully: its final lease is the last millisecond it used.
    expect(service.status().worker!.startupWaitMs).toBeLessThan(100);
    expect((await admin.getChildren(forever)).length).toBe(before);

    const { version } = await admin.getData(`${forever}/${node}`);
    await eventually(
      async () =>
        expect((await admin.getData(`${forever}/${node}`)).version).toBeGreaterThanOrEqual(
          version + 3,
        ),
      10_000,
    );
    const data = await nodeData(`${forever}/${node}`);
    expect(Number(data.reservedUntil) - Number(data.timestamp)).toBe(1000);
    await close(app);
  });

  it('refuses a second live instance advertising the same ip:port (LEAF_WORKER_ID_IN_USE); a graceful close frees the worker ID at once', async () => {
    // A small session timeout: the second start waits sessionTimeoutMs + 2 s before refusing.
    const zookeeper = {
      connect: zookeeperConnectString(),
      connectTimeoutMs: 3000,
      sessionTimeoutMs: 2000,
    };
    const first = await boot({ advertise: '10.0.0.50:8080', zookeeper });
    const service = first.get(SnowflakeService);
    const workerId = service.workerId!;
    const alive = `/snowflake/${name}/alive/${workerId}`;
    expect(await nodeData(alive)).toMatchObject({ identity: '10.0.0.50:8080', pid: process.pid });

    // The same state directory: its lock refuses at once.
    const locked = await boot({ advertise: '10.0.0.50:8080', zookeeper }).catch((e: unknown) => e);
    expect(locked).toBeInstanceOf(WorkerStateLockedError);
    expect(locked).toMatchObject({ code: LeafErrorCode.WORKER_STATE_LOCKED });

    // Another host (its own state directory): only the liveness node can tell.
    const otherHost = join(stateDir, 'other-host');
    const started = Date.now();
    const error = await boot({ advertise: '10.0.0.50:8080', zookeeper, stateDir: otherHost }).catch(
      (e: unknown) => e,
    );
    const waitedMs = Date.now() - started;
    expect(error).toBeInstanceOf(WorkerIdInUseError);
    expect(error).toMatchObject({
      code: LeafErrorCode.WORKER_ID_IN_USE,
      workerId,
      identity: '10.0.0.50:8080',
      alivePath: alive,
    });
    expect((error as Error).message).toMatch(
      /Another live process holds snowflake worker ID \d+ for identity 10\.0\.0\.50:8080.*LEAF_SNOWFLAKE_ADVERTISE/,
    );
    expect(waitedMs).toBeGreaterThanOrEqual(4000);
    expect(waitedMs).toBeLessThan(10_000);
    // The first instance is unaffected.
    expect(service.readiness()).toEqual({ ready: true, reason: null });
    expect(service.decode(await service.get()).workerId).toBe(workerId);

    await close(first);
    await expect(admin.getData(alive)).rejects.toMatchObject({ zkCode: 'NO_NODE' });
    const restarted = Date.now();
    const again = await boot({ advertise: '10.0.0.50:8080', zookeeper });
    expect(Date.now() - restarted).toBeLessThan(3000);
    expect(again.get(SnowflakeService).workerId).toBe(workerId);
    await close(again);
  }, 30_000);

  describe('with ZooKeeper unreachable at start', () => {
    const unreachable = { zookeeper: { connect: '127.0.0.1:1', connectTimeoutMs: 300 } };

    it('after a graceful stop, which handed the worker ID back, refuses: no local runway is left', async () => {
      const error = await boot({ ...unreachable, advertise: '10.0.0.1:8080' }).catch(
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(TimeLeaseUnavailableError);
      expect((error as Error).message).toMatch(/local runway is used up/);
    });

    it('after a crash, starts from a valid state file within the horizon it recorded, after the time check', async () => {
      const file = stateFileOf('10.0.0.1');
      const cached = JSON.parse(await fs.readFile(file, 'utf8')) as {
        workerId: number;
        zkSyncedAt: number;
      };
      // What a crashed run leaves: the horizon of its last ZooKeeper write (60 s runway).
      await fs.writeFile(
        file,
        JSON.stringify({ ...cached, zkHorizon: Date.now() + 30_000, run: 'crashed-run' }),
      );
      const app = await boot({ ...unreachable, advertise: '10.0.0.1:8080' });
      const service = app.get(SnowflakeService);
      expect(service.workerId).toBe(cached.workerId);
      expect(service.status().worker!.zookeeper).toEqual(
        expect.objectContaining({ connected: false, verified: false }),
      );
      expect(service.decode(await service.get()).workerId).toBe(cached.workerId);
      await close(app);
    });

    it('refuses when the state file is ahead of the clock by more than startupMaxWaitMs', async () => {
      const file = stateFileOf('10.0.0.1');
      const state = JSON.parse(await fs.readFile(file, 'utf8')) as Record<string, unknown>;
      await fs.writeFile(file, JSON.stringify({ ...state, reservedUntil: Date.now() + 60_000 }));
      const error = await boot({
        ...unreachable,
        advertise: '10.0.0.1:8080',
        startupMaxWaitMs: 500,
      }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(StartupClockBehindError);
      expect(error).toMatchObject({
        code: LeafErrorCode.STARTUP_CLOCK_BEHIND,
        workerId: state.workerId,
      });
      expect((error as Error).message).toMatch(/refuses to start/);
    });

    it('refuses a corrupt state file', async () => {
      await fs.writeFile(stateFileOf('10.0.0.2'), '{"version":1,"name":');
      const error = await boot({ ...unreachable, advertise: '10.0.0.2:8080' }).catch(
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(WorkerStateCorruptError);
      expect(error).toMatchObject({ code: LeafErrorCode.WORKER_STATE_CORRUPT });
    });

    it('refuses without a state file', async () => {
      const error = await boot({ ...unreachable, advertise: '10.0.0.99:8080' }).catch(
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(WorkerIdUnavailableError);
      expect((error as Error).message).toMatch(/127\.0\.0\.1:1 is unreachable.*no state file/);
    });

    it('with ZooKeeper reachable ignores the corrupt file and trusts the node: its last writer stopped gracefully, so no wait', async () => {
      const started = Date.now();
      const app = await boot({ advertise: '10.0.0.2:8080', startupMaxWaitMs: 500 });
      expect(Date.now() - started).toBeLessThan(3000);
      const status = app.get(SnowflakeService).status().worker!;
      expect(status.startupBoundSource).toMatch(/horizon: its last writer/);
      expect(status.startupWaitMs).toBe(0);
      await close(app);
    });
  });

  it('once the namespace reached sequence 1023, refuses the next new instance (reclaim: never) or reclaims a worker ID that is gone (default)', async () => {
    const full = `${name}-full`;
    const parent = `/snowflake/${full}/forever`;
    // Sequence numbers come from the parent's child counter: 1023 quick creates use 0..1022.
    await fillSequence(admin, parent, 1023);
    const zookeeper = { connect: zookeeperConnectString(), connectTimeoutMs: 3000 };
    const last = await boot({ advertise: '10.8.0.1:8080' }, { name: full });
    expect(last.get(SnowflakeService).workerId).toBe(1023);
    const lastId = await last.get(SnowflakeService).get();
    await close(last);

    const error = await boot(
      { advertise: '10.8.0.2:8080', zookeeper: { ...zookeeper, reclaim: 'never' } },
      { name: full },
    ).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(WorkerIdExhaustedError);
    expect(error).toMatchObject({
      code: LeafErrorCode.WORKER_ID_EXHAUSTED,
      sequence: 1024,
      identity: '10.8.0.2:8080',
    });
    expect((error as Error).message).toMatch(/worker IDs stop at 1023/);

    // With the default (when-exhausted), worker 1023 is taken over: its holder stopped
    // gracefully (horizon = its last millisecond), so after the 2 s margin.
    const reclaimer = await boot({ advertise: '10.8.0.3:8080' }, { name: full });
    const service = reclaimer.get(SnowflakeService);
    expect(service.workerId).toBe(1023);
    expect(await service.get()).toBeGreaterThan(lastId);
    expect(service.status().worker?.startupBoundSource).toMatch(
      /10\.8\.0\.1:8080-0000001023 horizon/,
    );
    const workers = await service.workers();
    expect(workers.find((w) => w.workerId === 1023)).toMatchObject({
      identity: '10.8.0.1:8080',
      holder: '10.8.0.3:8080',
      alive: true,
    });
    await close(reclaimer);
  }, 30_000);

  it('recovers from a forced session expiry and keeps heartbeating on the same node', async () => {
    const proxy = new TcpProxy(zookeeperEndpoint());
    await proxy.start();
    const logs: string[] = [];
    const factory: ZkClientFactory = () =>
      new ZookeeperClient({
        connect: `127.0.0.1:${proxy.port}`,
        sessionTimeoutMs: 2000,
        logger: (line) => logs.push(line),
      });
    try {
      const app = await boot({ advertise: '10.7.0.1:8080' }, { name: `${name}-expiry`, factory });
      const service = app.get(SnowflakeService);
      const nodePath = service.status().worker!.nodePath!;
      const negotiated = Number(/timeout (\d+) ms/.exec(logs.join('\n'))?.[1]);
      expect(negotiated).toBeGreaterThan(0);

      // Refused for 1.5 × the session timeout (+ slack), the session certainly expires.
      proxy.refuse(true);
      const blackoutIds = [];
      const blackoutEnd = Date.now() + negotiated * 1.5 + 750;
      while (Date.now() < blackoutEnd) {
        blackoutIds.push(await service.get()); // the lease is extended locally meanwhile
        await sleep(100);
      }
      proxy.refuse(false);
      const restored = Date.now();

      await eventually(() => expect(logs.join('\n')).toMatch(/expired/), 10_000);
      await eventually(
        async () => expect(Number((await nodeData(nodePath)).timestamp)).toBeGreaterThan(restored),
        10_000,
      );
      const { version } = await admin.getData(nodePath);
      await eventually(
        async () =>
          expect((await admin.getData(nodePath)).version).toBeGreaterThanOrEqual(version + 2),
        10_000,
      );
      expect(await admin.getChildren(`/snowflake/${name}-expiry/forever`)).toEqual([
        nodePath.slice(nodePath.lastIndexOf('/') + 1),
      ]);
      // The liveness node ended with the old session and was created again in the new one.
      await eventually(
        async () =>
          expect(await admin.getChildren(`/snowflake/${name}-expiry/alive`)).toEqual([
            String(service.workerId),
          ]),
        10_000,
      );
      expect(service.status()).toMatchObject({
        readiness: { ready: true },
        worker: { nodePath, zookeeper: { connected: true, verified: true } },
      });
      const after = await service.get();
      expect(after > blackoutIds[blackoutIds.length - 1]!).toBe(true);
      await close(app);
    } finally {
      await proxy.stop();
    }
  }, 30_000);
});
