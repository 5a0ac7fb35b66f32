/**
 * Gapless in-transaction mode (`GaplessNumberService.next`, docs/gapless.md) through Prisma 7,
 * Drizzle and MikroORM 7 — each ORM's own transaction, its executor from
 * `nestjs-leaf/gapless`, the document row written by the ORM in the same transaction — on real
 * PostgreSQL and real MariaDB (TypeORM's is test/gapless.e2e-spec.ts):
 * - concurrent transactions, half rolled back: the committed documents hold 1..n, no gap, and
 *   `verify` accounts for exactly those;
 * - a held series lock makes the next caller fail within `lockWaitMs`, `LEAF_GAPLESS_BUSY`, and
 *   its transaction leaves nothing;
 * - a retry with the same `documentKey` — after a commit, or racing the first attempt — answers
 *   the first number and takes no second; after a rollback it takes the number afresh.
 */
import { ScheduleModule } from '@nestjs/schedule';
import { Test, type TestingModule } from '@nestjs/testing';
import {
  defineEntity,
  p,
  type EntityManager as MikroEntityManager,
  type MikroORM,
} from '@mikro-orm/core';
import { MikroORM as MariaDbMikroORM } from '@mikro-orm/mariadb';
import { MikroORM as PostgreSqlMikroORM } from '@mikro-orm/postgresql';
import { PrismaMariaDb } from '@prisma/adapter-mariadb';
import { PrismaPg } from '@prisma/adapter-pg';
import { sql } from 'drizzle-orm';
import { drizzle as drizzleMysql } from 'drizzle-orm/mysql2';
import {
  bigint as mysqlBigint,
  mysqlTable,
  primaryKey as mysqlPrimaryKey,
  varchar as mysqlVarchar,
} from 'drizzle-orm/mysql-core';
import { drizzle as drizzlePg } from 'drizzle-orm/node-postgres';
import { bigint, pgTable, primaryKey, varchar } from 'drizzle-orm/pg-core';
import { createPool } from 'mysql2/promise';
import { Pool } from 'pg';
import type { DataSource } from 'typeorm';
import { LeafModule } from 'nestjs-leaf';
import { GaplessBusyError } from 'nestjs-leaf/errors';
import {
  GaplessNumberService,
  drizzleGaplessExecutor,
  mikroOrmGaplessExecutor,
  prismaGaplessExecutor,
  type GaplessSqlExecutor,
  type MikroOrmTransactionManager,
  type PrismaRawTransaction,
} from 'nestjs-leaf/gapless';
import { createPostgresTestDatabase } from './support/postgres-database';
import { generatePrismaClient, type GeneratedPrismaClient } from './support/prisma-client';
import { describeWithServices } from './support/services';
import { createTestDatabase } from './support/test-database';

jest.setTimeout(120_000);

type Kind = 'postgres' | 'mysql';

/** The caller's documents: one row per committed number, written by the ORM. */
const DOCUMENTS_SQL =
  'CREATE TABLE gapless_documents (series VARCHAR(64) NOT NULL, id VARCHAR(64) NOT NULL, number BIGINT NOT NULL, PRIMARY KEY (series, id))';

/** One open transaction of an ORM: the executor `next` takes, and the ORM's own insert. */
interface OrmTransaction {
  readonly executor: GaplessSqlExecutor;
  insert(series: string, id: string, number: bigint): Promise<void>;
}

/** An ORM on the spec's database: its READ COMMITTED transactions, and its shutdown. */
interface Orm {
  transaction<T>(work: (tx: OrmTransaction) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/** Connections per ORM pool: the concurrent transactions queue for them. */
const POOL = 8;

const PRISMA_MODEL = `
model GaplessDocument {
  series String
  id     String
  number BigInt

  @@id([series, id])
  @@map("gapless_documents")
}
`;

interface PrismaDocuments {
  gaplessDocument: { create(args: object): Promise<unknown> };
}
type PrismaTx = PrismaDocuments & PrismaRawTransaction;
interface PrismaClient {
  $transaction<T>(work: (tx: PrismaTx) => Promise<T>, options?: object): Promise<T>;
  $disconnect(): Promise<void>;
}

async function prismaOrm(kind: Kind, url: string): Promise<Orm & { remove(): void }> {
  const generated: GeneratedPrismaClient<PrismaClient> = await generatePrismaClient(
    kind === 'postgres' ? 'postgresql' : 'mysql',
    PRISMA_MODEL,
  );
  const adapter =
    kind === 'postgres'
      ? new PrismaPg({ connectionString: url, max: POOL })
      : new PrismaMariaDb(`${url.replace(/^mysql:/, 'mariadb:')}?connectionLimit=${POOL}`);
  const prisma = new generated.PrismaClient({ adapter });
  return {
    transaction: (work) =>
      prisma.$transaction(
        (tx) =>
          work({
            executor: prismaGaplessExecutor(tx),
            insert: async (series, id, number) => {
              await tx.gaplessDocument.create({ data: { series, id, number } });
            },
          }),
        { isolationLevel: 'ReadCommitted', maxWait: 60_000, timeout: 60_000 },
      ),
    close: () => prisma.$disconnect(),
    remove: () => generated.remove(),
  };
}

const pgDocuments = pgTable(
  'gapless_documents',
  {
    series: varchar('series', { length: 64 }).notNull(),
    id: varchar('id', { length: 64 }).notNull(),
    number: bigint('number', { mode: 'bigint' }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.series, t.id] })],
);
const mysqlDocuments = mysqlTable(
  'gapless_documents',
  {
    series: mysqlVarchar('series', { length: 64 }).notNull(),
    id: mysqlVarchar('id', { length: 64 }).notNull(),
    number: mysqlBigint('number', { mode: 'bigint' }).notNull(),
  },
  (t) => [mysqlPrimaryKey({ columns: [t.series, t.id] })],
);

function drizzleOrm(kind: Kind, url: string): Orm {
  if (kind === 'postgres') {
    const pool = new Pool({ connectionString: url, max: POOL });
    // A session the server ends (gapless.idleInTransactionMs) makes a checked-out pg client
    // emit `error`: without a listener, an uncaught exception (docs/gapless.md).
    pool.on('connect', (client) => client.on('error', () => undefined));
    const db = drizzlePg({ client: pool });
    return {
      transaction: (work) =>
        db.transaction(
          (tx) =>
            work({
              executor: drizzleGaplessExecutor(tx, sql),
              insert: async (series, id, number) => {
                await tx.insert(pgDocuments).values({ series, id, number });
              },
            }),
          { isolationLevel: 'read committed' },
        ),
      close: () => pool.end(),
    };
  }
  const pool = createPool({ uri: url, connectionLimit: POOL, supportBigNumbers: true });
  const db = drizzleMysql({ client: pool });
  return {
    transaction: (work) =>
      db.transaction(
        (tx) =>
          work({
            executor: drizzleGaplessExecutor(tx, sql),
            insert: async (series, id, number) => {
              await tx.insert(mysqlDocuments).values({ series, id, number });
            },
          }),
        { isolationLevel: 'read committed' },
      ),
    close: () => pool.end(),
  };
}

const MikroDocument = defineEntity({
  name: 'GaplessDocument',
  tableName: 'gapless_documents',
  properties: {
    series: p.string().length(64).primary(),
    id: p.string().length(64).primary(),
    number: p.bigint(),
  },
});

async function mikroOrm(kind: Kind, url: string): Promise<Orm> {
  const options = { entities: [MikroDocument], clientUrl: url, pool: { max: POOL } };
  const orm: MikroORM =
    kind === 'postgres'
      ? await PostgreSqlMikroORM.init(options)
      : await MariaDbMikroORM.init(options);
  return {
    transaction: (work) =>
      orm.em.fork().transactional(
        (em: MikroEntityManager) =>
          work({
            executor: mikroOrmGaplessExecutor(em as unknown as MikroOrmTransactionManager),
            insert: async (series, id, number) => {
              em.create(MikroDocument, { series, id, number });
              await em.flush();
            },
          }),
        { isolationLevel: 'read committed' as never },
      ),
    close: () => orm.close(),
  };
}

const ORMS = {
  prisma: prismaOrm,
  drizzle: drizzleOrm,
  'mikro-orm': mikroOrm,
} as const satisfies Record<string, (kind: Kind, url: string) => Orm | Promise<Orm>>;

/**
 * A LeafModule with gapless series on `dataSource`, its `next` waiting `lockWaitMs` at most
 * (and, on PostgreSQL, its caller's transaction idle `idleInTransactionMs` at most).
 */
async function leaf(
  dataSource: DataSource,
  lockWaitMs: number,
  idleInTransactionMs = 0,
): Promise<TestingModule> {
  const app = await Test.createTestingModule({
    imports: [
      ScheduleModule.forRoot(),
      LeafModule.forRoot({
        segment: false,
        gapless: { dataSource, lockWaitMs, idleInTransactionMs, sweepIntervalMs: 60_000 },
      }),
    ],
  }).compile();
  app.useLogger(false);
  await app.init();
  return app;
}

for (const kind of ['postgres', 'mysql'] as const) {
  describeWithServices([kind], `gapless in-transaction mode through ORMs, on ${kind}`, () => {
    let database: { url: string; drop(): Promise<void> };
    let dataSource: DataSource;
    const apps: TestingModule[] = [];
    /** Waits up to 30 s for the lock (the concurrent transactions queue on it). */
    let patient: GaplessNumberService;
    /** Waits 500 ms at most (PostgreSQL to the ms, MariaDB one whole second). */
    let impatient: GaplessNumberService;
    /** PostgreSQL: a transaction holding the lock idle for 400 ms is ended by the server. */
    let idleBounded: GaplessNumberService;

    beforeAll(async () => {
      const db =
        kind === 'postgres'
          ? await createPostgresTestDatabase({ migrate: true })
          : await createTestDatabase({ migrate: true });
      database = db;
      await db.query(DOCUMENTS_SQL);
      dataSource = await db.openDataSource();
      apps.push(
        await leaf(dataSource, 30_000),
        await leaf(dataSource, 500),
        await leaf(dataSource, 30_000, 400),
      );
      [patient, impatient, idleBounded] = apps.map((app) => app.get(GaplessNumberService));
    });

    afterAll(async () => {
      for (const app of apps) await app.close();
      await dataSource?.destroy();
      await database?.drop();
    });

    describe.each(Object.keys(ORMS) as Array<keyof typeof ORMS>)('%s', (ormName) => {
      const series = `${ormName}-${kind}`;
      let orm: Orm & { remove?: () => void };

      /** The committed documents of this ORM's series, by number. */
      async function documents(): Promise<Array<{ id: string; number: bigint }>> {
        const rows = (await dataSource.query(
          `SELECT id, CAST(number AS ${kind === 'postgres' ? 'TEXT' : 'CHAR'}) AS number FROM gapless_documents WHERE series = ${kind === 'postgres' ? '$1' : '?'}`,
          [series],
        )) as Array<{ id: string; number: string }>;
        return rows
          .map((row) => ({ id: row.id, number: BigInt(row.number) }))
          .sort((a, b) => (a.number < b.number ? -1 : 1));
      }

      /** `next` with `documentKey` `id`, then the ORM's insert; thrown out (rolled back) when `fail`. */
      function document(id: string, fail = false, service = patient) {
        return orm.transaction(async (tx) => {
          const taken = await service.next(series, tx.executor, { documentKey: id });
          await tx.insert(series, id, taken.number);
          if (fail) throw new Error('rolled back on purpose');
          return taken.number;
        });
      }

      beforeAll(async () => {
        orm = await ORMS[ormName](kind, database.url);
        await patient.createSeries({ name: series, prefix: 'D' });
      });

      afterAll(async () => {
        await orm?.close();
        orm?.remove?.();
      });

      it('concurrent transactions, half rolled back: the committed documents hold 1..n, no gap', async () => {
        const outcomes = await Promise.allSettled(
          Array.from({ length: 40 }, (_, i) => document(`doc-${i}`, i % 2 === 1)),
        );
        const failures = outcomes.flatMap((o) => (o.status === 'rejected' ? [o.reason] : []));
        expect(failures).toHaveLength(20);
        for (const failure of failures) expect(String(failure)).toContain('rolled back on purpose');
        const rows = await documents();
        expect(rows.map((row) => row.number)).toEqual(
          Array.from({ length: 20 }, (_, i) => BigInt(i + 1)),
        );
        expect(rows.every((row) => Number(row.id.slice(4)) % 2 === 0)).toBe(true);
        // Each committed transaction answered the number its document holds.
        const answered = outcomes.flatMap((o) => (o.status === 'fulfilled' ? [o.value] : []));
        expect(answered.sort((a, b) => (a < b ? -1 : 1))).toEqual(rows.map((row) => row.number));
        expect(await patient.verify(series)).toMatchObject({
          issued: 20,
          confirmed: 20,
          voided: 0,
          missing: [],
          duplicates: [],
          records: 20,
          ok: true,
        });
      });

      it('a held lock: the next caller fails within the bound with LEAF_GAPLESS_BUSY, and leaves nothing', async () => {
        const before = BigInt((await documents()).length);
        let release!: () => void;
        const held = new Promise<void>((resolve) => (release = resolve));
        let locked!: () => void;
        const isLocked = new Promise<void>((resolve) => (locked = resolve));
        const holder = orm.transaction(async (tx) => {
          const taken = await patient.next(series, tx.executor, { documentKey: 'holder' });
          await tx.insert(series, 'holder', taken.number);
          locked();
          await held;
          return taken.number;
        });
        await isLocked;
        const started = Date.now();
        const refused = await document('contender', false, impatient).catch((e: unknown) => e);
        const waited = Date.now() - started;
        release();
        expect(await holder).toBe(before + 1n);
        expect(refused).toBeInstanceOf(GaplessBusyError);
        expect(refused).toMatchObject({ code: 'LEAF_GAPLESS_BUSY', series });
        expect(waited).toBeGreaterThanOrEqual(kind === 'mysql' ? 900 : 450);
        expect(waited).toBeLessThan(kind === 'mysql' ? 4000 : 3000);
        // The contender's transaction wrote nothing; retried now, it takes the next number.
        expect((await documents()).map((row) => row.id)).not.toContain('contender');
        expect(await document('contender', false, impatient)).toBe(before + 2n);
        expect(await patient.verify(series)).toMatchObject({
          issued: Number(before) + 2,
          ok: true,
        });
      });

      it('a retry with the same documentKey takes no second number: after a commit, racing the first attempt, after a rollback', async () => {
        // After a commit: the first number again (the retry's own insert would then find
        // its document there: here it skips it).
        const again = await orm.transaction((tx) =>
          patient.next(series, tx.executor, { documentKey: 'doc-0' }),
        );
        const first = (await documents()).find((row) => row.id === 'doc-0')!;
        expect(again).toMatchObject({ number: first.number, state: 'confirmed' });

        // Racing: the second attempt waits for the first's lock, then finds its number;
        // its document insert meets the first's row and it rolls back.
        let release!: () => void;
        const held = new Promise<void>((resolve) => (release = resolve));
        let locked!: () => void;
        const isLocked = new Promise<void>((resolve) => (locked = resolve));
        const firstAttempt = orm.transaction(async (tx) => {
          const taken = await patient.next(series, tx.executor, { documentKey: 'raced' });
          await tx.insert(series, 'raced', taken.number);
          locked();
          await held;
          return taken.number;
        });
        await isLocked;
        let secondNumber: bigint | undefined;
        const secondAttempt = orm
          .transaction(async (tx) => {
            const taken = await patient.next(series, tx.executor, { documentKey: 'raced' });
            secondNumber = taken.number;
            await tx.insert(series, 'raced', taken.number);
          })
          .catch((error: unknown) => error);
        await new Promise((resolve) => setTimeout(resolve, 300));
        release();
        const raced = await firstAttempt;
        expect(await secondAttempt).toBeInstanceOf(Error); // its insert: a duplicate key
        expect(secondNumber).toBe(raced);

        // After a rollback nothing was taken: the retry takes the next number, once.
        await expect(document('rolled', true)).rejects.toThrow('rolled back on purpose');
        const retried = await document('rolled');
        expect(retried).toBe(raced + 1n);

        const numbers = (await documents()).map((row) => row.number);
        expect(numbers).toEqual(Array.from({ length: numbers.length }, (_, i) => BigInt(i + 1)));
        expect(await patient.verify(series)).toMatchObject({
          issued: numbers.length,
          confirmed: numbers.length,
          duplicates: [],
          missing: [],
          ok: true,
        });
      });

      // MikroORM 7 survives the ended session but never returns its connection to the pool
      // (its rollback fails first): `orm.close()` then waits forever (docs/gapless.md).
      if (kind === 'postgres' && ormName !== 'mikro-orm')
        it('PostgreSQL: a caller idle past idleInTransactionMs with the lock is ended by the server, and the lock released', async () => {
          const before = BigInt((await documents()).length);
          let locked!: () => void;
          const isLocked = new Promise<void>((resolve) => (locked = resolve));
          const idle = orm
            .transaction(async (tx) => {
              const taken = await idleBounded.next(series, tx.executor, { documentKey: 'idle' });
              locked();
              await new Promise((resolve) => setTimeout(resolve, 1500));
              await tx.insert(series, 'idle', taken.number);
            })
            .catch((error: unknown) => error);
          await isLocked;
          const started = Date.now();
          // Waits for the lock (bound 30 s): the server ends the idle holder after 400 ms.
          expect(await document('after-idle')).toBe(before + 1n);
          expect(Date.now() - started).toBeLessThan(1400);
          expect(await idle).toBeInstanceOf(Error);
          const ids = (await documents()).map((row) => row.id);
          expect(ids).toContain('after-idle');
          expect(ids).not.toContain('idle');
          expect(await patient.verify(series)).toMatchObject({ missing: [], ok: true });
        });
    });
  });
}
