import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { ScheduleModule, SchedulerRegistry } from '@nestjs/schedule';
import { TerminusModule } from '@nestjs/terminus';
import { Test } from '@nestjs/testing';
import { InvalidArgumentError } from '../../core/errors/invalid-argument.error';
import { ModeDisabledError } from '../../core/errors/mode-disabled.error';
import { ShuttingDownError } from '../../core/errors/shutting-down.error';
import { TimeLeaseUnavailableError } from '../../core/errors/time-lease-unavailable.error';
import { WorkerIdUnavailableError } from '../../core/errors/worker-id-unavailable.error';
import { SnowflakeHealthIndicator } from '../health/snowflake.health';
import { IdService } from '../../core/id.service';
import { LEAF_ZK_CLIENT_FACTORY } from '../leaf.constants';
import { LeafModule } from '../leaf.module';
import type { LeafModuleOptions, LeafSnowflakeOptions } from '../leaf-options.interface';
import { eventually } from '../../testing/eventually';
import { FakeZkClient } from '../../testing/fake-zk.client';
import { InMemoryWorkerLeaseStore } from '../../testing/in-memory-worker-lease.store';
import { tempDirPerTest } from '../../testing/temp-dir';
import { systemClock } from '../../core/clock';
import { decodeUuidV7, isUuidV7 } from '../../core/formats/snowflake-uuid-v7';
import { parseTypeId } from '../../core/formats/type-id';
import { SnowflakeService } from './snowflake.service';
import type { ZkClientFactoryOptions } from './zk-client.factory';

describe('LeafModule (snowflake wiring)', () => {
  const dir = tempDirPerTest('leaf-sf-module-');

  async function boot(
    zk: FakeZkClient | null,
    snowflake: LeafSnowflakeOptions | false = {},
    extra: LeafModuleOptions = {},
  ) {
    const factoryCalls: ZkClientFactoryOptions[] = [];
    const moduleRef = await Test.createTestingModule({
      imports: [
        ScheduleModule.forRoot(),
        TerminusModule,
        LeafModule.forRoot({
          segment: false,
          ...extra,
          snowflake:
            snowflake === false
              ? false
              : {
                  stateDir: dir(),
                  heartbeatIntervalMs: 40,
                  leaseMs: 400,
                  ...(zk
                    ? {
                        zookeeper: { connect: 'fake:2181', connectTimeoutMs: 100 },
                        advertise: '10.0.0.8:8080',
                      }
                    : {}),
                  ...snowflake,
                },
        }),
      ],
      // The indicator lives outside LeafModule (nestjs-leaf/health), as in an application.
      providers: [SnowflakeHealthIndicator],
    })
      .overrideProvider(LEAF_ZK_CLIENT_FACTORY)
      .useValue((options: ZkClientFactoryOptions) => {
        factoryCalls.push(options);
        if (!zk) throw new Error('no ZooKeeper in this test');
        return zk;
      })
      .compile();
    return { app: await moduleRef.init(), factoryCalls };
  }

  it('serves and decodes IDs through SnowflakeService and IdService', async () => {
    const zk = new FakeZkClient();
    // The fake answers in microtasks, so nothing below yields to the heartbeat's timer: a
    // lease longer than this test's run keeps readiness independent of the machine's speed.
    const { app, factoryCalls } = await boot(zk, { leaseMs: 30_000 });
    try {
      expect(factoryCalls).toEqual([{ connect: 'fake:2181', sessionTimeoutMs: 10_000 }]);
      const snowflake = app.get(SnowflakeService);
      expect(snowflake.workerId).toBe(0);
      const a = await snowflake.get();
      const b = await snowflake.get('order');
      const c = await app.get(IdService).get('snowflake', 'anything');
      const batch = await app.get(IdService).getIds('snowflake', 'k', 1000);
      const d = snowflake.getSync('k');
      const all = [a, b, c, ...batch, d];
      for (let i = 1; i < all.length; i++) expect(all[i]! > all[i - 1]!).toBe(true);
      expect(snowflake.decode(a.toString())).toMatchObject({ id: a, workerId: 0 });
      expect(Math.abs(snowflake.decode(c).timestamp - Date.now())).toBeLessThan(5000);

      await expect(snowflake.get('bad key')).rejects.toBeInstanceOf(InvalidArgumentError);
      await expect(snowflake.getIds('k', 0)).rejects.toBeInstanceOf(InvalidArgumentError);
      await expect(snowflake.getIds('k', 1001)).rejects.toBeInstanceOf(InvalidArgumentError);
      await expect(app.get(IdService).getIds('snowflake', 'bad key', 2)).rejects.toBeInstanceOf(
        InvalidArgumentError,
      );
      expect(() => snowflake.decode('-1')).toThrow(InvalidArgumentError);
      expect(snowflake.status()).toMatchObject({
        started: true,
        readiness: { ready: true },
        worker: { workerId: 0, mode: 'zookeeper' },
      });
    } finally {
      await app.close();
    }
  });

  it('issues UUIDv7 and TypeIDs made from its IDs, and checks a prefix before taking one', async () => {
    const { app } = await boot(null, { workerId: 5 });
    try {
      const snowflake = app.get(SnowflakeService);
      const ids = app.get(IdService);
      const issued = () => snowflake.status().worker!.generator.issued;
      const uuids = [
        ...(await ids.getTexts('snowflake', 'order', 1, 'uuid')),
        ...(await ids.getTexts('snowflake', 'k', 500, 'uuid')),
      ];
      const typeIds = await ids.getTexts('snowflake', 'k', 300, 'typeid', { prefix: 'order' });
      for (let i = 1; i < uuids.length; i++) expect(uuids[i]! > uuids[i - 1]!).toBe(true);
      for (let i = 1; i < typeIds.length; i++) expect(typeIds[i]! > typeIds[i - 1]!).toBe(true);
      for (const uuid of uuids) {
        expect(isUuidV7(uuid)).toBe(true);
        expect(decodeUuidV7(uuid, snowflake.layout).workerId).toBe(5);
      }
      const last = parseTypeId(typeIds[typeIds.length - 1]!);
      expect(last.prefix).toBe('order');
      expect(last.uuid > uuids[uuids.length - 1]!).toBe(true);
      expect(
        snowflake.decode(decodeUuidV7(last.uuid, snowflake.layout).snowflakeId!),
      ).toMatchObject({ workerId: 5 });
      expect((await ids.getTexts('snowflake', 'k', 1, 'typeid'))[0]).toMatch(
        /^[0-7][0-9a-hjkmnp-tv-z]{25}$/,
      );

      const before = issued();
      for (const [key, count, format, prefix] of [
        ['k', 1, 'typeid', 'Order'],
        ['k', 2, 'typeid', 'order_'],
        ['bad key', 1, 'uuid', undefined],
        ['k', 0, 'uuid', undefined],
      ] as const) {
        await expect(
          ids.getTexts('snowflake', key, count, format, { prefix }),
        ).rejects.toBeInstanceOf(InvalidArgumentError);
      }
      expect(issued()).toBe(before);
    } finally {
      await app.close();
    }
  });

  it('runs the heartbeat under a namespaced job name, and on close stops it, records the lease and closes ZooKeeper', async () => {
    const zk = new FakeZkClient();
    const { app } = await boot(zk, {}, { name: 'order-ids' });
    const nodePath = '/snowflake/order-ids/forever/10.0.0.8:8080-0000000000';
    const scheduler = app.get(SchedulerRegistry);
    expect(scheduler.getIntervals()).toContain('leaf:order-ids:snowflake:heartbeat');
    const { version } = await zk.getData(nodePath);
    await eventually(async () =>
      expect((await zk.getData(nodePath)).version).toBeGreaterThan(version + 2),
    );
    const last = await app.get(SnowflakeService).get();
    const lastTimestamp = app.get(SnowflakeService).decode(last).timestamp;

    await app.close();
    expect(scheduler.getIntervals()).toEqual([]);
    expect(zk.connected).toBe(false);
    await expect(zk.getChildren('/')).rejects.toMatchObject({ zkCode: 'CLOSED' });
    await expect(app.get(SnowflakeService).get()).rejects.toBeInstanceOf(ShuttingDownError);
    const state = JSON.parse(
      await fs.readFile(path.join(dir(), 'snowflake-order-ids-10.0.0.8_8080.json'), 'utf8'),
    ) as { reservedUntil: number };
    expect(state.reservedUntil).toBe(lastTimestamp);
  });

  it('reports health: up while it can issue, down (and failing closed) once the lease cannot be extended', async () => {
    const zk = new FakeZkClient();
    const { app } = await boot(zk, { localRunwayMs: 0 });
    try {
      const health = app.get(SnowflakeHealthIndicator);
      expect(health.isHealthy()).toMatchObject({
        snowflake: { status: 'up', workerId: 0, mode: 'zookeeper', zookeeper: true },
      });
      zk.setUnavailable(true);
      await eventually(() =>
        expect(health.isHealthy('sf')).toMatchObject({
          sf: { status: 'down', message: expect.stringContaining('lease') },
        }),
      );
      await expect(app.get(SnowflakeService).get()).rejects.toBeInstanceOf(
        TimeLeaseUnavailableError,
      );
      zk.setUnavailable(false);
      await eventually(() =>
        expect(health.isHealthy()).toMatchObject({ snowflake: { status: 'up' } }),
      );
      await expect(app.get(SnowflakeService).get()).resolves.toEqual(expect.any(BigInt));
    } finally {
      await app.close();
    }
  });

  it('reports not ready ("shutting down") from the first shutdown hook, while still serving', async () => {
    const { app } = await boot(new FakeZkClient());
    try {
      const snowflake = app.get(SnowflakeService);
      expect(snowflake.readiness()).toEqual({ ready: true, reason: null });
      snowflake.onModuleDestroy();
      expect(snowflake.readiness()).toEqual({ ready: false, reason: 'shutting down' });
      await expect(snowflake.get()).resolves.toEqual(expect.any(BigInt));
    } finally {
      await app.close();
    }
  });

  it('fails the start with a typed error, and closes the ZooKeeper client', async () => {
    const zk = new FakeZkClient();
    zk.setUnavailable(true);
    await expect(boot(zk)).rejects.toBeInstanceOf(WorkerIdUnavailableError);
    await expect(zk.connect(10)).rejects.toMatchObject({ zkCode: 'CLOSED' });
  });

  it('serves embedded mode without ZooKeeper, with the configured worker ID', async () => {
    const { app, factoryCalls } = await boot(null, { workerId: 9 });
    try {
      expect(factoryCalls).toEqual([]);
      const snowflake = app.get(SnowflakeService);
      expect(snowflake.decode(await snowflake.get()).workerId).toBe(9);
      expect((await fs.readdir(dir())).sort()).toEqual([
        'snowflake-leaf-embedded-9.json',
        'snowflake-leaf-embedded-9.json.lock',
      ]);
    } finally {
      await app.close();
    }
  });

  it('registers nothing of snowflake mode when it is off: IdService answers ModeDisabled, health reports it up as disabled', async () => {
    const { app } = await boot(null, false);
    try {
      expect(() => app.get(SnowflakeService)).toThrow(/SnowflakeService/);
      await expect(app.get(IdService).getIds('snowflake', 'k', 2)).rejects.toBeInstanceOf(
        ModeDisabledError,
      );
      await expect(app.get(IdService).get('snowflake', 'k')).rejects.toBeInstanceOf(
        ModeDisabledError,
      );
      expect(app.get(SnowflakeHealthIndicator).isHealthy()).toEqual({
        snowflake: { status: 'up', enabled: false },
      });
      expect(app.get(SchedulerRegistry).getIntervals()).toEqual([]);
    } finally {
      await app.close();
    }
  });

  it('keeps two applications in one process apart', async () => {
    const a = await boot(null, { workerId: 1 }, { name: 'a' });
    const b = await boot(null, { workerId: 2, stateDir: path.join(dir(), 'b') }, { name: 'b' });
    try {
      const fromA = a.app.get(SnowflakeService);
      const fromB = b.app.get(SnowflakeService);
      const [idsA, idsB] = await Promise.all([fromA.getIds('k', 500), fromB.getIds('k', 500)]);
      expect(new Set(idsA.map((id) => fromA.decode(id).workerId))).toEqual(new Set([1]));
      expect(new Set(idsB.map((id) => fromB.decode(id).workerId))).toEqual(new Set([2]));
      expect(a.app.get(SchedulerRegistry).getIntervals()).toEqual(['leaf:a:snowflake:heartbeat']);
      expect(b.app.get(SchedulerRegistry).getIntervals()).toEqual(['leaf:b:snowflake:heartbeat']);
      await a.app.close();
      await expect(fromA.get()).rejects.toBeInstanceOf(ShuttingDownError);
      await expect(fromB.get()).resolves.toEqual(expect.any(BigInt));
    } finally {
      await a.app.close();
      await b.app.close();
    }
  });

  it('leases the worker ID from the database: two applications on one store, released on close', async () => {
    const store = new InMemoryWorkerLeaseStore(systemClock);
    const database = { store, marginMs: 100 };
    const a = await boot(null, { database, advertise: 'a:1', leaseMs: 30_000 });
    const b = await boot(null, {
      database,
      advertise: 'b:1',
      leaseMs: 30_000,
      stateDir: path.join(dir(), 'b'),
    });
    try {
      const [fromA, fromB] = [a.app.get(SnowflakeService), b.app.get(SnowflakeService)];
      expect([fromA.workerId, fromB.workerId]).toEqual([0, 1]);
      expect(fromA.decode(await fromA.get()).workerId).toBe(0);
      expect(fromA.status().worker).toMatchObject({
        mode: 'database',
        identity: 'a:1',
        database: { store: 'in-memory leaf_worker_lease', holder: 'a:1', epoch: '1', lost: null },
      });
      expect(a.app.get(SnowflakeHealthIndicator).isHealthy()).toMatchObject({
        snowflake: { status: 'up', mode: 'database', coordination: 'database' },
      });
      expect((await fromB.workers()).map((w) => [w.workerId, w.holder, w.alive])).toEqual([
        [0, 'a:1', true],
        [1, 'b:1', true],
      ]);
      await a.app.close();
      // Released: the row expired at once, its horizon the last millisecond used.
      expect((await fromB.workers())[0]).toMatchObject({ holder: 'a:1', alive: false });
    } finally {
      await a.app.close();
      await b.app.close();
    }
  });
});
