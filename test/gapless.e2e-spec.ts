/**
 * Gapless series end to end on MariaDB and PostgreSQL (docs/gapless.md): three LeafModule
 * instances in one process on one database reserving, retrying, confirming, voiding and
 * abandoning, then `verify`; in-transaction mode through TypeORM with half the transactions
 * rolled back, and a bounded lock wait.
 */
import { Test, type TestingModule } from '@nestjs/testing';
import { ScheduleModule } from '@nestjs/schedule';
import type { DataSource, EntityManager } from 'typeorm';
import { LeafModule } from 'nestjs-leaf';
import { GaplessNumberService, type GaplessNumber } from 'nestjs-leaf/gapless';
import {
  GaplessBusyError,
  GaplessReservationExpiredError,
  GaplessSettledError,
} from 'nestjs-leaf/errors';
import { createPostgresTestDatabase } from './support/postgres-database';
import { createTestDatabase } from './support/test-database';
import { describeWithServices } from './support/services';

jest.setTimeout(300_000);

type Kind = 'mysql' | 'postgres';

async function openDatabase(kind: Kind) {
  const db = kind === 'mysql' ? await createTestDatabase() : await createPostgresTestDatabase();
  const first = await db.openDataSource({ migrate: true, overrides: { poolSize: 12 } as never });
  const open = () => db.openDataSource({ overrides: { poolSize: 12 } as never });
  return { db, first, open };
}

async function instance(dataSource: DataSource, lockWaitMs = 2000): Promise<TestingModule> {
  const app = await Test.createTestingModule({
    imports: [
      ScheduleModule.forRoot(),
      LeafModule.forRoot({
        segment: false,
        gapless: { dataSource, sweepIntervalMs: 100, lockWaitMs, maxBatch: 200 },
      }),
    ],
  }).compile();
  app.useLogger(false);
  await app.init();
  return app;
}

/** Runs `task(i)` for i in 0..count-1 with at most `width` in flight. */
async function pool(count: number, width: number, task: (i: number) => Promise<void>) {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < count) await task(next++);
    }),
  );
}

/** npm test's size; `LEAF_GAPLESS_RESERVATIONS=20000` for the full run (docs/gapless.md). */
const RESERVATIONS = Number(process.env.LEAF_GAPLESS_RESERVATIONS ?? 3000);

/**
 * `call` again while the series is busy (`GaplessBusyError`, a 503 with Retry-After on the
 * wire): what a caller does; on a loaded machine a lock wait may exceed its bound.
 */
async function unlessBusy<T>(call: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await call();
    } catch (error) {
      if (!(error instanceof GaplessBusyError) || attempt >= 20) throw error;
      await new Promise((resolve) => setTimeout(resolve, 20 * attempt));
    }
  }
}

describe.each<Kind>(['mysql', 'postgres'])('gapless series on %s', (kind) => {
  describeWithServices([kind], `gapless on ${kind}`, () => {
    let database: Awaited<ReturnType<typeof openDatabase>>;
    const sources: DataSource[] = [];
    const apps: TestingModule[] = [];
    let services: GaplessNumberService[];

    beforeAll(async () => {
      database = await openDatabase(kind);
      sources.push(database.first, await database.open(), await database.open());
      for (const source of sources) apps.push(await instance(source));
      services = apps.map((app) => app.get(GaplessNumberService));
    });
    afterAll(async () => {
      for (const app of apps) await app.close();
      for (const source of sources) if (source.isInitialized) await source.destroy();
      await database?.db.drop();
    });

    it(`three instances, ${RESERVATIONS} reservations with retries, confirms, voids and abandons: verify finds nothing wrong`, async () => {
      await services[0]!.createSeries({ name: 'inv', prefix: 'INV', width: 8, period: 'year' });
      const first = new Map<string, GaplessNumber>();
      const settled = new Map<string, 'confirmed' | 'voided' | 'abandoned'>();
      let retries = 0;
      let confirmed = 0;
      let voided = 0;
      const any = () => services[Math.floor(Math.random() * services.length)]!;
      await pool(RESERVATIONS, 64, async (i) => {
        const key = `order-${i}`;
        const roll = Math.random();
        // Abandoned reservations get a short TTL: the sweeps void them.
        const ttl = roll < 0.2 ? 300 : 60_000;
        const reserved = await unlessBusy(() => any().reserve('inv', key, ttl));
        first.set(key, reserved);
        if (Math.random() < 0.15) {
          retries++;
          const again = await unlessBusy(() => any().reserve('inv', key, ttl)).catch(
            (error: unknown) => error,
          );
          // An abandoned reservation may have expired already: then it says so, typed.
          if (!(roll < 0.2 && again instanceof GaplessReservationExpiredError))
            expect((again as GaplessNumber).number).toBe(reserved.number);
        }
        settled.set(key, roll < 0.2 ? 'abandoned' : roll < 0.75 ? 'confirmed' : 'voided');
        if (roll < 0.2) return;
        if (roll < 0.75) {
          await unlessBusy(() => any().confirm('inv', reserved.number, key));
          confirmed++;
          if (Math.random() < 0.1) {
            retries++;
            expect(await unlessBusy(() => any().reserve('inv', key, ttl))).toMatchObject({
              number: reserved.number,
              state: 'confirmed',
            });
          }
        } else {
          await unlessBusy(() =>
            any().void('inv', reserved.number.toString(), key, 'customer cancelled'),
          );
          voided++;
        }
      });
      // The abandoned ones expire (300 ms) and the sweeps (every 100 ms) void them.
      await new Promise((resolve) => setTimeout(resolve, 800));
      await services[1]!.sweep();
      // Every key answered with its first number on any instance after settlement, or told
      // that its number was voided (by its caller, or by its TTL).
      for (let i = 0; i < RESERVATIONS; i += 97) {
        const key = `order-${i}`;
        const again = await unlessBusy(() => services[i % 3]!.reserve('inv', key)).catch(
          (error: unknown) => error,
        );
        const expected = {
          confirmed: { number: first.get(key)!.number, state: 'confirmed' },
          voided: GaplessSettledError,
          abandoned: GaplessReservationExpiredError,
        }[settled.get(key)!];
        if (typeof expected === 'function') expect(again).toBeInstanceOf(expected);
        else expect(again).toMatchObject(expected);
      }
      const numbers = [...first.values()].map((n) => n.number).sort((a, b) => (a < b ? -1 : 1));
      expect(numbers[0]).toBe(1n);
      expect(numbers[numbers.length - 1]).toBe(BigInt(RESERVATIONS));
      const report = await services[2]!.verify('inv');
      expect(report).toMatchObject({
        issued: RESERVATIONS,
        confirmed,
        voided: RESERVATIONS - confirmed,
        pending: 0,
        missing: [],
        duplicates: [],
        voidsWithoutReason: [],
        unrecorded: [],
        records: RESERVATIONS,
        ok: true,
      });
      expect(report.chainBrokenAt).toBeUndefined();
      expect(voided).toBeLessThan(RESERVATIONS - confirmed);
      expect(retries).toBeGreaterThan(RESERVATIONS / 20);
    });

    it('in-transaction mode: concurrent transactions, half rolled back, leave the committed rows gapless', async () => {
      const service = services[0]!;
      await service.createSeries({ name: 'doc', prefix: 'D' });
      const source = sources[1]!;
      await source.query(
        'CREATE TABLE gapless_invoice (id varchar(32) PRIMARY KEY, number bigint NOT NULL)',
      );
      const insert =
        kind === 'mysql'
          ? 'INSERT INTO gapless_invoice (id, number) VALUES (?, ?)'
          : 'INSERT INTO gapless_invoice (id, number) VALUES ($1, $2)';
      const outcomes = await Promise.allSettled(
        Array.from({ length: 60 }, (_, i) =>
          source.transaction('READ COMMITTED', async (manager: EntityManager) => {
            const taken = await service.next('doc', manager, { documentKey: `doc-${i}` });
            await manager.query(insert, [`doc-${i}`, taken.number]);
            if (i % 2 === 1) throw new Error('rolled back on purpose');
            return taken.number;
          }),
        ),
      );
      const committed = outcomes.filter((o) => o.status === 'fulfilled');
      expect(committed).toHaveLength(30);
      const rows = (await source.query(
        'SELECT number FROM gapless_invoice ORDER BY number',
      )) as Array<{ number: string | number }>;
      expect(rows.map((row) => String(row.number))).toEqual(
        Array.from({ length: 30 }, (_, i) => String(i + 1)),
      );
      // A retry of a committed document answers its first number.
      const retried = await source.transaction((manager) =>
        service.next('doc', manager, { documentKey: 'doc-0' }),
      );
      expect(retried.number).toBe(BigInt((committed[0] as PromiseFulfilledResult<bigint>).value));
      expect(await service.verify('doc')).toMatchObject({
        issued: 30,
        confirmed: 30,
        records: 30,
        ok: true,
      });
    });

    it('in-transaction mode: a held lock makes the next caller fail within the bound, typed', async () => {
      const busy = await instance(sources[2]!, 500);
      apps.push(busy);
      const service = busy.get(GaplessNumberService);
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      let locked!: () => void;
      const isLocked = new Promise<void>((resolve) => (locked = resolve));
      const holder = sources[0]!.transaction(async (manager) => {
        await service.next('doc', manager);
        locked();
        await held;
      });
      await isLocked;
      const started = Date.now();
      const refused = await sources[1]!
        .transaction((manager) => service.next('doc', manager))
        .catch((error: unknown) => error);
      const waited = Date.now() - started;
      release();
      await holder;
      expect(refused).toBeInstanceOf(GaplessBusyError);
      expect(waited).toBeGreaterThanOrEqual(kind === 'mysql' ? 900 : 400);
      expect(waited).toBeLessThan(kind === 'mysql' ? 3000 : 2000);
      expect((await service.verify('doc')).ok).toBe(true);
    });
  });
});
