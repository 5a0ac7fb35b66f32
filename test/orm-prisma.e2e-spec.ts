/**
 * Leaf IDs on an application's own Prisma models (`nestjs-leaf/orm/prisma`) with Prisma 7 —
 * driver adapters, a client generated at test time (test/support/prisma-client.ts) — in a
 * Nest application wired as the docs say: `LeafModule` in-process (segment on the same
 * database, embedded snowflake) and the extended client from a factory provider over
 * `IdService`; on real PostgreSQL (`@prisma/adapter-pg`) and real MariaDB
 * (`@prisma/adapter-mariadb`); then over `LeafClientModule` against a running Leaf HTTP
 * application. Every ID comes from Leaf — the ID columns are plain BIGINTs (a VARCHAR for the
 * String ID) made by SQL, no default, no identity — one source call per mode and key per
 * operation, and a failing source fails the operation with its LeafError before anything is
 * written.
 */
import { Inject, Injectable, type OnApplicationShutdown } from '@nestjs/common';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { ScheduleModule } from '@nestjs/schedule';
import { Test, type TestingModule } from '@nestjs/testing';
import { PrismaMariaDb } from '@prisma/adapter-mariadb';
import { PrismaPg } from '@prisma/adapter-pg';
import { IdService, LeafError, LeafModule, type LeafMode } from 'nestjs-leaf';
import { LeafClientModule } from 'nestjs-leaf/client/nest';
import { LeafConfigurationError, TagNotFoundError } from 'nestjs-leaf/errors';
import { leafPrismaIds, type LeafPrismaIdsOptions } from 'nestjs-leaf/orm/prisma';
import type { DataSource } from 'typeorm';
import { startApp, tempDir } from './support/app';
import { createPostgresTestDatabase } from './support/postgres-database';
import { generatePrismaClient, type GeneratedPrismaClient } from './support/prisma-client';
import { describeWithServices } from './support/services';
import { createTestDatabase } from './support/test-database';

jest.setTimeout(60_000);

/**
 * The docs' schema shape: `@default(dbgenerated())` makes the ID optional in Prisma's create
 * types, while the tables (below) have no default — a row without a Leaf ID fails on its key.
 */
const MODELS = `
model Order {
  id    BigInt      @id @default(dbgenerated())
  name  String
  lines OrderLine[]

  @@map("prisma_orders")
}

model OrderLine {
  id      BigInt     @id @default(dbgenerated())
  sku     String
  orderId BigInt     @map("order_id")
  order   Order      @relation(fields: [orderId], references: [id])
  notes   LineNote[]

  @@map("prisma_order_lines")
}

model LineNote {
  id     String    @id @default(dbgenerated()) @db.VarChar(20)
  body   String
  lineId BigInt    @map("line_id")
  line   OrderLine @relation(fields: [lineId], references: [id])

  @@map("prisma_line_notes")
}

model Customer {
  id    BigInt @id @default(dbgenerated())
  email String @unique
  name  String

  @@map("prisma_customers")
}

model Ghost {
  id   BigInt @id @default(dbgenerated())
  name String

  @@map("prisma_ghosts")
}
`;

/** The tables, as the docs give them: `prisma migrate` is not run here. */
const TABLES = [
  'CREATE TABLE prisma_orders (id BIGINT PRIMARY KEY, name VARCHAR(64) NOT NULL)',
  'CREATE TABLE prisma_order_lines (id BIGINT PRIMARY KEY, sku VARCHAR(64) NOT NULL, order_id BIGINT NOT NULL, FOREIGN KEY (order_id) REFERENCES prisma_orders (id))',
  'CREATE TABLE prisma_line_notes (id VARCHAR(20) PRIMARY KEY, body VARCHAR(64) NOT NULL, line_id BIGINT NOT NULL, FOREIGN KEY (line_id) REFERENCES prisma_order_lines (id))',
  'CREATE TABLE prisma_customers (id BIGINT PRIMARY KEY, email VARCHAR(128) NOT NULL UNIQUE, name VARCHAR(64) NOT NULL)',
  'CREATE TABLE prisma_ghosts (id BIGINT PRIMARY KEY, name VARCHAR(64) NOT NULL)',
];

/** 2^53 + 1: the customers' first ID, beyond what a JavaScript number holds exactly. */
const ABOVE_2_53 = 9_007_199_254_740_993n;

/** Segment tags (step 100: a batch of 250 crosses ranges); LineNote takes snowflake IDs. */
const OPTIONS: LeafPrismaIdsOptions = {
  models: {
    Order: {}, // segment (the default), tag prisma_orders (the table name)
    OrderLine: { key: 'order-lines' },
    LineNote: { mode: 'snowflake' }, // a String field: decimal strings
    Customer: { key: 'customers' },
    Ghost: { key: 'no-such-tag' },
  },
};

interface OrderRow {
  id: bigint;
  name: string;
  lines?: LineRow[];
}
interface LineRow {
  id: bigint;
  sku: string;
  orderId: bigint;
  notes?: NoteRow[];
}
interface NoteRow {
  id: string;
  body: string;
  lineId: bigint;
}
interface CustomerRow {
  id: bigint;
  email: string;
  name: string;
}

/** What the spec uses of a model delegate of the generated client. */
interface Delegate<Row> {
  create(args: object): Promise<Row>;
  createMany(args: object): Promise<{ count: number }>;
  createManyAndReturn(args: object): Promise<Row[]>;
  upsert(args: object): Promise<Row>;
  update(args: object): Promise<Row>;
  findMany(args?: object): Promise<Row[]>;
  findUniqueOrThrow(args: object): Promise<Row>;
}

/** What the spec uses of the generated client (its own types exist only once generated). */
interface Client {
  order: Delegate<OrderRow>;
  orderLine: Delegate<LineRow>;
  lineNote: Delegate<NoteRow>;
  customer: Delegate<CustomerRow>;
  ghost: Delegate<{ id: bigint; name: string }>;
  $extends(extension: unknown): Client;
  $transaction<T>(work: (tx: Client) => Promise<T>): Promise<T>;
  $transaction<T>(batch: Promise<T>[]): Promise<T[]>;
  $disconnect(): Promise<void>;
}

/** The application's `IdService`, recording each call the extension makes on it. */
class RecordingIds extends IdService {
  private calls: string[] = [];

  constructor(private readonly inner: IdService) {
    super();
  }

  get(mode: LeafMode, key: string): Promise<bigint> {
    this.calls.push(`get ${mode} ${key}`);
    return this.inner.get(mode, key);
  }

  getIds(mode: LeafMode, key: string, count: number): Promise<bigint[]> {
    this.calls.push(`getIds ${mode} ${key} ${count}`);
    return this.inner.getIds(mode, key, count);
  }

  /** The calls since the last `take()`. */
  take(): string[] {
    return this.calls.splice(0);
  }
}

/** The injection token of the extended client, as in the docs' `PrismaService`. */
const PRISMA = 'PrismaService';

/** Disconnects the client when the application stops (the docs' `PrismaShutdown`). */
@Injectable()
class PrismaShutdown implements OnApplicationShutdown {
  constructor(@Inject(PRISMA) private readonly prisma: Client) {}

  async onApplicationShutdown(): Promise<void> {
    await this.prisma.$disconnect();
  }
}

interface Db {
  readonly kind: 'postgres' | 'mysql';
  readonly url: string;
  openDataSource(): Promise<DataSource>;
  query<T>(sql: string, params?: unknown[]): Promise<T[]>;
  drop(): Promise<void>;
}

async function openDb(kind: 'postgres' | 'mysql'): Promise<Db> {
  const db = (kind === 'postgres'
    ? await createPostgresTestDatabase({ migrate: true })
    : await createTestDatabase({ migrate: true })) as unknown as Omit<Db, 'kind'>;
  for (const sql of TABLES) await db.query(sql);
  for (const [tag, maxId] of [
    ['prisma_orders', '1'],
    ['order-lines', '1'],
    ['customers', ABOVE_2_53.toString()],
  ])
    await db.query(
      `INSERT INTO leaf_alloc (biz_tag, max_id, step) VALUES ('${tag}', ${maxId}, 100)`,
    );
  return Object.assign(db, { kind });
}

function adapterFor(db: Db): unknown {
  return db.kind === 'postgres'
    ? new PrismaPg({ connectionString: db.url })
    : new PrismaMariaDb(db.url.replace(/^mysql:/, 'mariadb:'));
}

/** `SELECT id FROM table` as decimal strings, sorted as numbers. */
async function idsIn(db: Db, table: string): Promise<string[]> {
  const rows = await db.query<{ id: string | number }>(
    `SELECT CAST(id AS ${db.kind === 'postgres' ? 'TEXT' : 'CHAR'}) AS id FROM ${table}`,
  );
  return rows.map((row) => String(row.id)).sort((a, b) => (BigInt(a) < BigInt(b) ? -1 : 1));
}

async function rejection(work: Promise<unknown>): Promise<unknown> {
  return work.then(
    () => {
      throw new Error('expected a rejection');
    },
    (error: unknown) => error,
  );
}

for (const kind of ['postgres', 'mysql'] as const) {
  describeWithServices([kind], `Leaf IDs on Prisma models, in-process, on ${kind}`, () => {
    let db: Db;
    let dataSource: DataSource;
    let generated: GeneratedPrismaClient<Client>;
    let app: TestingModule;
    let prisma: Client;
    let ids: RecordingIds;
    const state = tempDir('leaf-orm-prisma');

    beforeAll(async () => {
      [db, generated] = await Promise.all([
        openDb(kind),
        generatePrismaClient<Client>(kind === 'postgres' ? 'postgresql' : 'mysql', MODELS),
      ]);
      dataSource = await db.openDataSource();
      app = await Test.createTestingModule({
        imports: [
          ScheduleModule.forRoot(),
          LeafModule.forRoot({
            isGlobal: true,
            segment: { dataSource },
            snowflake: { workerId: 0, stateDir: state.path },
          }),
        ],
        providers: [
          {
            provide: PRISMA,
            inject: [IdService],
            useFactory: (source: IdService) => {
              ids = new RecordingIds(source);
              return new generated.PrismaClient({ adapter: adapterFor(db) }).$extends(
                leafPrismaIds(ids, OPTIONS),
              );
            },
          },
          PrismaShutdown,
        ],
      }).compile();
      app.useLogger(false);
      await app.init();
      prisma = app.get<Client>(PRISMA);
    });

    afterAll(async () => {
      await app?.close();
      await dataSource?.destroy();
      await db?.drop();
      generated?.remove();
      state.remove();
    });

    it('create: a segment ID (bigint) from the tag named after the table, read back exact', async () => {
      const order = await prisma.order.create({ data: { name: 'first' } });
      expect(order).toEqual({ id: 1n, name: 'first' });
      expect(ids.take()).toEqual(['get segment prisma_orders']);
      expect(await prisma.order.findUniqueOrThrow({ where: { id: 1n } })).toEqual(order);
      expect(await idsIn(db, 'prisma_orders')).toEqual(['1']);
    });

    it("createMany of 250 rows: one getIds call, 250 distinct IDs; the caller's rows untouched", async () => {
      const rows = Array.from({ length: 250 }, (_, i) => ({ name: `bulk-${i}` }));
      expect(await prisma.order.createMany({ data: rows })).toEqual({ count: 250 });
      expect(ids.take()).toEqual(['getIds segment prisma_orders 250']);
      expect(rows.every((row) => !('id' in row))).toBe(true);
      const all = await idsIn(db, 'prisma_orders');
      expect(all).toHaveLength(251);
      expect(new Set(all).size).toBe(251);
    });

    it('chunks of maxBatchSize: 250 rows with maxBatchSize 100 take three calls', async () => {
      const chunked = new generated.PrismaClient({ adapter: adapterFor(db) }).$extends(
        leafPrismaIds(ids, { ...OPTIONS, maxBatchSize: 100 }),
      );
      try {
        const rows = Array.from({ length: 250 }, (_, i) => ({ name: `chunk-${i}` }));
        expect(await chunked.order.createMany({ data: rows })).toEqual({ count: 250 });
        expect(ids.take()).toEqual([
          'getIds segment prisma_orders 100',
          'getIds segment prisma_orders 100',
          'getIds segment prisma_orders 50',
        ]);
      } finally {
        await chunked.$disconnect();
      }
    });

    if (kind === 'postgres')
      it('createManyAndReturn: the rows come back with their IDs, increasing', async () => {
        const rows = await prisma.order.createManyAndReturn({
          data: [{ name: 'r1' }, { name: 'r2' }, { name: 'r3' }],
        });
        expect(ids.take()).toEqual(['getIds segment prisma_orders 3']);
        const [a, b, c] = rows.map((row) => row.id);
        expect([typeof a, b - a, c - b]).toEqual(['bigint', 1n, 1n]);
      });

    it("nested creates: lines (create and createMany), a line's notes (a child of a child, snowflake decimal strings)", async () => {
      const order = await prisma.order.create({
        data: {
          name: 'nested',
          lines: {
            create: [
              { sku: 'a', notes: { create: [{ body: 'n1' }, { body: 'n2' }] } },
              { sku: 'b' },
            ],
          },
        },
        include: { lines: { include: { notes: true }, orderBy: { id: 'asc' } } },
      });
      expect(ids.take()).toEqual([
        'get segment prisma_orders',
        'getIds segment order-lines 2',
        'getIds snowflake prisma_line_notes 2',
      ]);
      const [a, b] = order.lines!;
      expect([a.id, a.sku, a.orderId, b.id, b.sku, b.orderId]).toEqual([
        1n,
        'a',
        order.id,
        2n,
        'b',
        order.id,
      ]);
      expect(a.notes!.map((note) => [note.body, note.lineId])).toEqual(
        expect.arrayContaining([
          ['n1', 1n],
          ['n2', 1n],
        ]),
      );
      for (const note of a.notes!) {
        expect(note.id).toMatch(/^\d+$/);
        expect(BigInt(note.id) > 2n ** 53n).toBe(true);
        expect((BigInt(note.id) >> 12n) & 1023n).toBe(0n); // Leaf's layout: worker ID 0
      }

      const other = await prisma.order.create({
        data: {
          name: 'nested many',
          lines: { createMany: { data: [{ sku: 'c' }, { sku: 'd' }] } },
        },
        include: { lines: { orderBy: { id: 'asc' } } },
      });
      expect(other.lines!.map((line) => line.id)).toEqual([3n, 4n]);
      ids.take();

      // An update creates rows too: a nested create, and connectOrCreate's create branch.
      const updated = await prisma.order.update({
        where: { id: other.id },
        data: {
          name: 'nested update',
          lines: {
            create: { sku: 'e' },
            connectOrCreate: { where: { id: 999n }, create: { sku: 'f' } },
          },
        },
        include: { lines: { orderBy: { id: 'asc' } } },
      });
      expect(ids.take()).toEqual(['getIds segment order-lines 2']);
      expect(updated.id).toBe(other.id);
      expect(updated.lines!.map((line) => [line.id, line.sku])).toEqual([
        [3n, 'c'],
        [4n, 'd'],
        [5n, 'e'],
        [6n, 'f'],
      ]);
      expect(await idsIn(db, 'prisma_order_lines')).toEqual(['1', '2', '3', '4', '5', '6']);
      expect(await idsIn(db, 'prisma_line_notes')).toHaveLength(2);
    });

    it('a BigInt above 2^53 makes the round trip exact', async () => {
      const customer = await prisma.customer.create({ data: { email: 'big@x', name: 'big' } });
      expect(customer.id).toBe(ABOVE_2_53);
      expect(await prisma.customer.findUniqueOrThrow({ where: { id: ABOVE_2_53 } })).toEqual(
        customer,
      );
      expect(await idsIn(db, 'prisma_customers')).toEqual(['9007199254740993']);
      ids.take();
    });

    it('upsert: the create branch gets an ID; the update branch leaves the row’s ID', async () => {
      const created = await prisma.customer.upsert({
        where: { email: 'up@x' },
        create: { email: 'up@x', name: 'new' },
        update: { name: 'unused' },
      });
      expect(created.id).toBe(ABOVE_2_53 + 1n);
      const updated = await prisma.customer.upsert({
        where: { email: 'up@x' },
        create: { email: 'up@x', name: 'unused' },
        update: { name: 'renamed' },
      });
      // The create branch's ID was taken (and is not used): the row keeps its own.
      expect(updated).toEqual({ id: created.id, email: 'up@x', name: 'renamed' });
      expect(ids.take()).toEqual(['get segment customers', 'get segment customers']);
    });

    it('an interactive $transaction: committed with it; rolled back, no rows, the IDs consumed', async () => {
      const committed = await prisma.$transaction((tx) =>
        tx.customer.create({ data: { email: 'tx1@x', name: 't' } }),
      );
      expect(committed.id).toBe(ABOVE_2_53 + 3n);
      const error = await rejection(
        prisma.$transaction(async (tx) => {
          await tx.order.create({ data: { name: 'rolled back', lines: { create: { sku: 'x' } } } });
          await tx.customer.create({ data: { email: 'tx2@x', name: 't' } });
          throw new Error('abort');
        }),
      );
      expect(error).toEqual(new Error('abort'));
      expect(await db.query(`SELECT * FROM prisma_orders WHERE name = 'rolled back'`)).toEqual([]);
      expect(await db.query(`SELECT * FROM prisma_customers WHERE email = 'tx2@x'`)).toEqual([]);
      // A batch transaction: each operation's rows get their IDs.
      const batch = await prisma.$transaction([
        prisma.customer.create({ data: { email: 'b1@x', name: 'b' } }),
        prisma.customer.create({ data: { email: 'b2@x', name: 'b' } }),
      ]);
      expect(batch.map((c) => c.id).sort()).toEqual([ABOVE_2_53 + 5n, ABOVE_2_53 + 6n]);
      const next = await prisma.customer.create({ data: { email: 'after@x', name: 'a' } });
      expect(next.id).toBe(ABOVE_2_53 + 7n); // +4 went to the rolled-back row
      ids.take();
    });

    it('a caller-set ID is kept, on create, createMany and nested creates', async () => {
      const set = 9_000_000_000_000_000_001n;
      const order = await prisma.order.create({
        data: { id: set, name: 'set', lines: { create: [{ id: set, sku: 's' }, { sku: 't' }] } },
        include: { lines: { orderBy: { id: 'asc' } } },
      });
      expect(ids.take()).toEqual(['get segment order-lines']);
      expect(order.id).toBe(set);
      expect(order.lines!.map((line) => line.id)).toEqual([8n, set]); // 7: the rolled-back line
      await prisma.order.createMany({ data: [{ id: set + 1n, name: 'set2' }, { name: 'unset' }] });
      expect(ids.take()).toEqual(['get segment prisma_orders']);
      expect((await idsIn(db, 'prisma_orders')).slice(-2)).toEqual([
        '9000000000000000001',
        '9000000000000000002',
      ]);
    });

    it('an unknown tag: TagNotFoundError, nothing written (a nested child’s tag fails the parent too)', async () => {
      const error = await rejection(prisma.ghost.create({ data: { name: 'boo' } }));
      expect(error).toBeInstanceOf(TagNotFoundError);
      expect((error as LeafError).code).toBe('LEAF_TAG_NOT_FOUND');
      const bulk = await rejection(
        prisma.ghost.createMany({ data: [{ name: 'a' }, { name: 'b' }] }),
      );
      expect(bulk).toBeInstanceOf(TagNotFoundError);
      expect(await db.query('SELECT * FROM prisma_ghosts')).toEqual([]);

      const lost = new generated.PrismaClient({ adapter: adapterFor(db) }).$extends(
        leafPrismaIds(ids, { models: { Order: {}, OrderLine: { key: 'no-such-tag' } } }),
      );
      try {
        const nested = await rejection(
          lost.order.create({ data: { name: 'orphan', lines: { create: { sku: 'x' } } } }),
        );
        expect(nested).toBeInstanceOf(TagNotFoundError);
        expect(await db.query(`SELECT * FROM prisma_orders WHERE name = 'orphan'`)).toEqual([]);
      } finally {
        await lost.$disconnect();
      }
      ids.take();
    });

    it('without the extension the create fails on the key: the table makes no ID', async () => {
      const plain = new generated.PrismaClient({ adapter: adapterFor(db) });
      try {
        const error = await rejection(plain.order.create({ data: { name: 'unheard' } }));
        expect(error).toBeInstanceOf(Error);
        expect(error).not.toBeInstanceOf(LeafError);
        expect(await db.query(`SELECT * FROM prisma_orders WHERE name = 'unheard'`)).toEqual([]);
      } finally {
        await plain.$disconnect();
      }
    });

    it('options that do not fit the schema fail $extends with LeafConfigurationError', () => {
      const client = new generated.PrismaClient({ adapter: adapterFor(db) });
      let error: unknown;
      try {
        client.$extends(leafPrismaIds(ids, { models: { Order: { field: 'lines' }, Ordr: {} } }));
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(LeafConfigurationError);
      expect((error as LeafConfigurationError).problems).toEqual([
        'models.Order: Order.lines is a relation (to OrderLine), not an ID field',
        'models.Ordr: the Prisma schema has no model Ordr (its models: Order, OrderLine, LineNote, Customer, Ghost)',
      ]);
    });
  });
}

describeWithServices(['postgres'], 'Leaf IDs on Prisma models over LeafClientModule', () => {
  let db: Db;
  let generated: GeneratedPrismaClient<Client>;
  let server: NestFastifyApplication | undefined;
  let app: TestingModule | undefined;
  const state = tempDir('leaf-orm-prisma-remote');

  beforeAll(async () => {
    [db, generated] = await Promise.all([
      openDb('postgres'),
      generatePrismaClient<Client>('postgresql', MODELS),
    ]);
    server = await startApp(
      { LEAF_DB_URL: db.url, LEAF_SNOWFLAKE_ENABLED: 'false', LEAF_STATE_DIR: state.path },
      { listen: true },
    );
    app = await Test.createTestingModule({
      imports: [LeafClientModule.forRoot({ isGlobal: true, servers: [await server.getUrl()] })],
      providers: [
        {
          provide: PRISMA,
          inject: [IdService],
          useFactory: (ids: IdService) =>
            new generated.PrismaClient({ adapter: adapterFor(db) }).$extends(
              leafPrismaIds(ids, OPTIONS),
            ),
        },
        PrismaShutdown,
      ],
    }).compile();
    app.useLogger(false);
    await app.init();
  });

  afterAll(async () => {
    await app?.close();
    await server?.close();
    await db?.drop();
    generated?.remove();
    state.remove();
  });

  it("IDs from a running Leaf server, a batch in one call; the server's error fails the write", async () => {
    const prisma = app!.get<Client>(PRISMA);
    const rows = await prisma.order.createManyAndReturn({ data: [{ name: 'r1' }, { name: 'r2' }] });
    const [a, b] = rows.map((row) => row.id);
    expect(b).toBe(a + 1n); // one range of the server's, taken in one call
    expect(await idsIn(db, 'prisma_orders')).toEqual([String(a), String(b)]);

    // LineNote takes snowflake IDs, which this server does not serve.
    const line = await prisma.orderLine.create({
      data: { sku: 'x', order: { connect: { id: a } } },
    });
    const error = await rejection(
      prisma.lineNote.create({ data: { body: 'n', line: { connect: { id: line.id } } } }),
    );
    expect(error).toBeInstanceOf(LeafError);
    expect((error as LeafError).code).toBe('LEAF_MODE_DISABLED');
    expect(await db.query('SELECT * FROM prisma_line_notes')).toEqual([]);
  });
});
