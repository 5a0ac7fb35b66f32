/**
 * Leaf IDs on an application's own TypeORM entities (`nestjs-leaf/orm/typeorm`), in a real
 * Nest application: `LeafModule` in-process (segment on the same database, embedded
 * snowflake) and `LeafTypeOrmModule`, on real PostgreSQL and real MariaDB; then the same
 * entities over `LeafClientModule` against a running Leaf HTTP application. Every ID comes
 * from Leaf — the ID column is a plain BIGINT with no default or identity — and a failing ID
 * source fails the insert with its LeafError, no row written.
 */
import { ScheduleModule } from '@nestjs/schedule';
import { Test, type TestingModule } from '@nestjs/testing';
import { TypeOrmModule, getRepositoryToken } from '@nestjs/typeorm';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { IdService, LeafError, LeafModule, ModeDisabledError, SegmentService } from 'nestjs-leaf';
import { LeafConfigurationError, TagNotFoundError } from 'nestjs-leaf/errors';
import { LeafClientModule } from 'nestjs-leaf/client/nest';
import { LeafIdColumn, LeafIdSubscriber, LeafTypeOrmModule } from 'nestjs-leaf/orm/typeorm';
import { LeafAllocEntity } from 'nestjs-leaf/storage/typeorm';
import {
  Column,
  DataSource,
  Entity,
  ManyToOne,
  OneToMany,
  QueryFailedError,
  type DataSourceOptions,
  type Repository,
} from 'typeorm';
import { startApp, tempDir } from './support/app';
import { keyColumn } from './support/orm-leaf';
import { createPostgresTestDatabase } from './support/postgres-database';
import { describeWithServices } from './support/services';
import { createTestDatabase } from './support/test-database';

jest.setTimeout(60_000);

@Entity({ name: 'orders' })
class Order {
  /** Segment, tag `orders` (the table name): a decimal string. */
  @LeafIdColumn()
  id!: string;

  @Column({ type: 'varchar', length: 64 })
  name!: string;

  @OneToMany(() => OrderLine, (line) => line.order, { cascade: ['insert'] })
  lines?: OrderLine[];
}

@Entity({ name: 'order_lines' })
class OrderLine {
  /** Segment, tag `lines`: a bigint (from the declared type). */
  @LeafIdColumn({ key: 'lines' })
  id!: bigint;

  @Column({ type: 'varchar', length: 64 })
  sku!: string;

  @ManyToOne(() => Order, (order) => order.lines, { nullable: false })
  order!: Order;
}

@Entity({ name: 'audit_events' })
class AuditEvent {
  /** Snowflake, configured in LeafTypeOrmModule.forRoot({ entities }), as a bigint. */
  @LeafIdColumn({ type: 'bigint' })
  id!: bigint;

  /** A second Leaf column that is not the key, segment tag `audit-refs`, left alone when set. */
  @LeafIdColumn({ primary: false, mode: 'segment', key: 'audit-refs' })
  ref!: string;

  @Column({ type: 'varchar', length: 64 })
  what!: string;
}

@Entity({ name: 'customers' })
class Customer {
  @LeafIdColumn({ mode: 'segment', key: 'customers' })
  id!: string;

  @Column({ type: 'varchar', length: 128, unique: true })
  email!: string;

  @Column({ type: 'varchar', length: 64 })
  name!: string;
}

@Entity({ name: 'ghosts' })
class Ghost {
  /** A tag no leaf_alloc row has. */
  @LeafIdColumn({ mode: 'segment', key: 'no-such-tag' })
  id!: string;

  @Column({ type: 'varchar', length: 64 })
  name!: string;
}

@Entity({ name: 'modeless' })
class Modeless {
  /** No mode here, and none in the subscriber's options. */
  @LeafIdColumn()
  id!: string;

  @Column({ type: 'varchar', length: 64 })
  name!: string;
}

const ENTITIES = [LeafAllocEntity, Order, OrderLine, AuditEvent, Customer, Ghost];
const TAGS = ['orders', 'lines', 'audit-refs', 'customers'];

interface Db {
  readonly kind: 'postgres' | 'mysql';
  readonly url: string;
  dataSourceOptions(overrides?: Partial<DataSourceOptions>): DataSourceOptions;
  query<T>(sql: string, params?: unknown[]): Promise<T[]>;
  drop(): Promise<void>;
}

async function openDb(kind: 'postgres' | 'mysql'): Promise<Db> {
  const db =
    kind === 'postgres'
      ? await createPostgresTestDatabase({ migrate: true })
      : await createTestDatabase({ migrate: true });
  const raw = db as unknown as Omit<Db, 'kind'>;
  // step 100: a 1,000-row bulk insert crosses ranges.
  for (const tag of TAGS)
    await raw.query(`INSERT INTO leaf_alloc (biz_tag, max_id, step) VALUES ('${tag}', 1, 100)`);
  return Object.assign(raw, { kind });
}

function typeorm(db: Db) {
  return TypeOrmModule.forRoot({
    ...(db.dataSourceOptions({ entities: ENTITIES, synchronize: true, migrations: [] }) as object),
  });
}

/** `SELECT id FROM table` as decimal strings, sorted. */
async function idsIn(db: Db, table: string): Promise<string[]> {
  const rows = await db.query<{ id: string | number }>(
    `SELECT CAST(id AS ${db.kind === 'postgres' ? 'TEXT' : 'CHAR'}) AS id FROM ${table}`,
  );
  return rows.map((row) => String(row.id)).sort((a, b) => (BigInt(a) < BigInt(b) ? -1 : 1));
}

function expectDistinct(ids: readonly (string | bigint)[]) {
  expect(new Set(ids.map(String)).size).toBe(ids.length);
}

for (const kind of ['postgres', 'mysql'] as const) {
  describeWithServices([kind], `Leaf IDs on TypeORM entities, in-process, on ${kind}`, () => {
    let db: Db;
    let app: TestingModule;
    const state = tempDir('leaf-orm-typeorm');
    const repo = <T extends object>(entity: new () => T) =>
      app.get<Repository<T>>(getRepositoryToken(entity));

    beforeAll(async () => {
      db = await openDb(kind);
      app = await Test.createTestingModule({
        imports: [
          ScheduleModule.forRoot(),
          typeorm(db),
          LeafModule.forRootAsync({
            isGlobal: true,
            modes: ['segment', 'snowflake'],
            inject: [DataSource],
            useFactory: (dataSource: DataSource) => ({
              segment: { dataSource },
              snowflake: { workerId: 5, stateDir: state.path },
            }),
          }),
          LeafTypeOrmModule.forRoot({
            defaults: { mode: 'segment' },
            entities: [{ entity: AuditEvent, mode: 'snowflake' }],
          }),
          TypeOrmModule.forFeature([Order, OrderLine, AuditEvent, Customer, Ghost]),
        ],
      }).compile();
      app.useLogger(false);
      await app.init();
    });

    afterAll(async () => {
      await app?.close();
      await db?.drop();
      state.remove();
    });

    it('the ID column is a plain BIGINT: no default, no identity, no auto-increment', async () => {
      const column = await keyColumn(db, 'orders');
      expect(column.data_type).toBe('bigint');
      expect(column.column_default).toBeNull();
      expect(column.extra).toBe(kind === 'postgres' ? 'NO' : '');
    });

    it('save gives a new entity its segment ID (string), read back as the same string', async () => {
      const order = await repo(Order).save(repo(Order).create({ name: 'first' }));
      expect(order.id).toBe('1');
      const read = await repo(Order).findOneByOrFail({ id: order.id });
      expect(read).toEqual({ id: '1', name: 'first' });
      expect(await idsIn(db, 'orders')).toEqual(['1']);
    });

    it('save of 1,000 entities: 1,000 distinct IDs taken in one getIds call; insert of 500 plain objects too', async () => {
      const ids = app.get(IdService);
      const getIds = jest.spyOn(ids, 'getIds');
      const get = jest.spyOn(ids, 'get');
      try {
        const saved = await repo(Order).save(
          Array.from({ length: 1000 }, (_, i) => repo(Order).create({ name: `bulk-${i}` })),
        );
        expect(getIds.mock.calls).toEqual([['segment', 'orders', 1000]]);
        expect(get).not.toHaveBeenCalled();
        expectDistinct(saved.map((o) => o.id));

        const plain = Array.from({ length: 500 }, (_, i) => ({ name: `insert-${i}` }));
        await repo(Order).insert(plain);
        // insert() runs the subscriber too (InsertQueryBuilder calls beforeInsert per row),
        // writing the IDs into the objects passed in.
        const inserted = plain.map((row) => (row as { id?: string }).id);
        expect(inserted.every((id) => typeof id === 'string' && /^\d+$/.test(id))).toBe(true);
        expect(getIds).toHaveBeenLastCalledWith('segment', 'orders', 500);

        // And the query builder, for a bulk insert of its own.
        const built = [{ name: 'qb-1' }, { name: 'qb-2' }];
        await app.get(DataSource).createQueryBuilder().insert().into(Order).values(built).execute();

        const all = await idsIn(db, 'orders');
        expect(all).toHaveLength(1 + 1000 + 500 + 2);
        expectDistinct(all);
        expect(all).toEqual(
          expect.arrayContaining([...saved.map((o) => o.id), ...(inserted as string[])]),
        );
      } finally {
        getIds.mockRestore();
        get.mockRestore();
      }
    });

    it('a cascaded child gets its own ID (bigint), and its foreign key the parent’s', async () => {
      const order = await repo(Order).save(
        repo(Order).create({
          name: 'with lines',
          lines: [repo(OrderLine).create({ sku: 'a' }), repo(OrderLine).create({ sku: 'b' })],
        }),
      );
      expect(order.lines?.map((line) => typeof line.id)).toEqual(['bigint', 'bigint']);
      const read = await repo(OrderLine).find({
        where: { order: { id: order.id } },
        relations: { order: true },
        order: { id: 'ASC' },
      });
      expect(read.map((line) => [line.id, line.sku, line.order.id])).toEqual([
        [1n, 'a', order.id],
        [2n, 'b', order.id],
      ]);
    });

    it('snowflake IDs (per-entity setting) and a second, non-key Leaf column; a caller-set value is kept', async () => {
      const events = await repo(AuditEvent).save([
        repo(AuditEvent).create({ what: 'x' }),
        repo(AuditEvent).create({ what: 'y', ref: '777' }),
        repo(AuditEvent).create({ what: 'z', id: 123n }),
      ]);
      const [x, y, z] = events;
      // Leaf's layout: the worker ID sits in bits 12-21.
      for (const event of [x, y]) {
        expect(typeof event.id).toBe('bigint');
        expect(event.id > 2n ** 53n).toBe(true);
        expect((event.id >> 12n) & 1023n).toBe(5n);
      }
      expect(z.id).toBe(123n);
      expect(y.ref).toBe('777');
      expect([x.ref, z.ref]).toEqual(['1', '2']);
      const read = await repo(AuditEvent).find({ order: { what: 'ASC' } });
      expect(read.map((e) => [e.id, e.ref])).toEqual([
        [x.id, '1'],
        [y.id, '777'],
        [123n, '2'],
      ]);
    });

    it('a caller-set ID is kept on save and insert', async () => {
      await repo(Customer).save(
        repo(Customer).create({ id: '9000000000000000001', email: 'set@x', name: 's' }),
      );
      await repo(Customer).insert({ id: '9000000000000000002', email: 'set2@x', name: 's' });
      expect(await idsIn(db, 'customers')).toEqual(['9000000000000000001', '9000000000000000002']);
    });

    it('inside a transaction: committed with it; rolled back, the rows are gone and the IDs consumed', async () => {
      const dataSource = app.get(DataSource);
      const committed = await dataSource.transaction((manager) =>
        manager.save(Customer, [
          manager.create(Customer, { email: 'tx1@x', name: 't' }),
          manager.create(Customer, { email: 'tx2@x', name: 't' }),
        ]),
      );
      expect(committed.map((c) => c.id)).toEqual(['1', '2']);

      let rolledBack: Customer | undefined;
      await expect(
        dataSource.transaction(async (manager) => {
          rolledBack = await manager.save(manager.create(Customer, { email: 'tx3@x', name: 't' }));
          throw new Error('abort');
        }),
      ).rejects.toThrow('abort');
      expect(rolledBack?.id).toBe('3');

      const runner = dataSource.createQueryRunner();
      await runner.connect();
      await runner.startTransaction();
      try {
        await runner.manager.insert(Customer, { email: 'qr@x', name: 'q' });
        await runner.rollbackTransaction();
      } finally {
        await runner.release();
      }

      const next = await repo(Customer).save(
        repo(Customer).create({ email: 'after@x', name: 'a' }),
      );
      expect(next.id).toBe('5'); // 3 and 4 were consumed by the rolled-back inserts
      const emails = await db.query<{ email: string }>(
        'SELECT email FROM customers ORDER BY email',
      );
      expect(emails.map((r) => r.email)).toEqual(['after@x', 'set2@x', 'set@x', 'tx1@x', 'tx2@x']);
    });

    it('upsert and save of an existing entity keep the row’s ID', async () => {
      const customers = repo(Customer);
      const existing = await customers.findOneByOrFail({ email: 'tx1@x' });
      await customers.upsert({ id: existing.id, email: 'tx1@x', name: 'renamed' }, ['id']);
      // Conflict on another unique column: the row keeps its ID (the object passed in holds
      // a fresh, unused ID: upsert decides in the database, after the subscriber ran).
      await customers.upsert({ email: 'tx1@x', name: 'renamed twice' }, ['email']);
      existing.name = 'saved';
      await customers.save(existing);
      const rows = await db.query<{ id: string | number; name: string }>(
        `SELECT id, name FROM customers WHERE email = 'tx1@x'`,
      );
      expect(rows.map((r) => [String(r.id), r.name])).toEqual([[existing.id, 'saved']]);
    });

    it('an unknown tag fails the insert with TagNotFoundError and writes nothing', async () => {
      const error: unknown = await repo(Ghost)
        .save(repo(Ghost).create({ name: 'boo' }))
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(TagNotFoundError);
      expect((error as LeafError).code).toBe('LEAF_TAG_NOT_FOUND');
      const bulk: unknown = await repo(Ghost)
        .insert([{ name: 'a' }, { name: 'b' }])
        .catch((e: unknown) => e);
      expect(bulk).toBeInstanceOf(TagNotFoundError);
      expect(await db.query('SELECT * FROM ghosts')).toEqual([]);
    });

    it('without the subscriber (listeners: false) the insert fails on the key: no auto-increment, no 0', async () => {
      const error: unknown = await repo(Order)
        .save(repo(Order).create({ name: 'unheard' }), { listeners: false })
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(QueryFailedError);
      expect(await db.query(`SELECT * FROM orders WHERE name = 'unheard'`)).toEqual([]);
    });
  });
}

describeWithServices(
  ['postgres'],
  'Leaf IDs on TypeORM entities: failures and the remote client',
  () => {
    let db: Db;
    const state = tempDir('leaf-orm-typeorm-remote');
    let server: NestFastifyApplication | undefined;

    beforeAll(async () => {
      db = await openDb('postgres');
    });

    afterAll(async () => {
      await server?.close();
      await db?.drop();
      state.remove();
    });

    async function boot(
      leaf:
        ReturnType<typeof LeafModule.forRootAsync> | ReturnType<typeof LeafClientModule.forRoot>,
    ) {
      const app = await Test.createTestingModule({
        imports: [
          ScheduleModule.forRoot(),
          typeorm(db),
          leaf,
          LeafTypeOrmModule.forRoot({
            defaults: { mode: 'segment' },
            entities: [{ entity: AuditEvent, mode: 'snowflake' }],
          }),
          TypeOrmModule.forFeature([Order, AuditEvent]),
        ],
      }).compile();
      app.useLogger(false);
      await app.init();
      return app;
    }

    it('a mode that is off fails the insert with ModeDisabledError; the subscriber leaves with its app', async () => {
      const app = await boot(
        LeafModule.forRootAsync({
          isGlobal: true,
          inject: [DataSource],
          useFactory: (dataSource: DataSource) => ({ segment: { dataSource }, snowflake: false }),
        }),
      );
      const dataSource = app.get(DataSource);
      try {
        const events = app.get<Repository<AuditEvent>>(getRepositoryToken(AuditEvent));
        const error: unknown = await events
          .save(events.create({ what: 'w' }))
          .catch((e: unknown) => e);
        expect(error).toBeInstanceOf(ModeDisabledError);
        expect(await db.query('SELECT * FROM audit_events')).toEqual([]);
        expect(dataSource.subscribers).toContain(app.get(LeafIdSubscriber));
        expect(app.get(SegmentService)).toBeDefined();
      } finally {
        await app.close();
      }
      expect(dataSource.subscribers.some((s) => s instanceof LeafIdSubscriber)).toBe(false);
    });

    it('on a DataSource of its own (no Nest wiring): a column with no mode fails with LeafConfigurationError', async () => {
      const app = await boot(
        LeafModule.forRootAsync({
          isGlobal: true,
          inject: [DataSource],
          useFactory: (dataSource: DataSource) => ({ segment: { dataSource }, snowflake: false }),
        }),
      );
      const own = new DataSource(
        db.dataSourceOptions({ entities: [Modeless], synchronize: true, migrations: [] }),
      );
      try {
        await own.initialize();
        own.subscribers.push(new LeafIdSubscriber(app.get(IdService)));
        const error: unknown = await own
          .getRepository(Modeless)
          .save({ name: 'm' })
          .catch((e: unknown) => e);
        expect(error).toBeInstanceOf(LeafConfigurationError);
        expect((error as LeafConfigurationError).problems).toEqual([
          'Modeless.id has no mode: give @LeafIdColumn({ mode }), an entities[] entry or defaults.mode',
        ]);
        expect(await db.query('SELECT * FROM modeless')).toEqual([]);
      } finally {
        if (own.isInitialized) await own.destroy();
        await app.close();
      }
    });

    it('over LeafClientModule: IDs from a running Leaf server; its errors fail the insert', async () => {
      server = await startApp(
        { LEAF_DB_URL: db.url, LEAF_SNOWFLAKE_ENABLED: 'false', LEAF_STATE_DIR: state.path },
        { listen: true },
      );
      const url = await server.getUrl();
      const app = await boot(LeafClientModule.forRoot({ isGlobal: true, servers: [url] }));
      try {
        const orders = app.get<Repository<Order>>(getRepositoryToken(Order));
        const saved = await orders.save([
          orders.create({ name: 'r1' }),
          orders.create({ name: 'r2' }),
        ]);
        const [a, b] = saved.map((o) => BigInt(o.id));
        expect(b).toBe(a + 1n); // one range of the server's, taken in one call
        expect(await idsIn(db, 'orders')).toEqual([String(a), String(b)]);

        const events = app.get<Repository<AuditEvent>>(getRepositoryToken(AuditEvent));
        const error: unknown = await events
          .save(events.create({ what: 'w' }))
          .catch((e: unknown) => e);
        expect(error).toBeInstanceOf(LeafError);
        expect((error as LeafError).code).toBe('LEAF_MODE_DISABLED');
      } finally {
        await app.close();
      }
    });

    it('over LeafClientModule with no server answering: the insert fails with a LeafError, no row', async () => {
      const app = await boot(
        LeafClientModule.forRoot({
          isGlobal: true,
          servers: ['http://127.0.0.1:9'],
          requestTimeoutMs: 500,
          waitTimeoutMs: 1000,
        }),
      );
      try {
        const orders = app.get<Repository<Order>>(getRepositoryToken(Order));
        const error: unknown = await orders
          .save(orders.create({ name: 'lost' }))
          .catch((e: unknown) => e);
        expect(error).toBeInstanceOf(LeafError);
        expect(await db.query(`SELECT * FROM orders WHERE name = 'lost'`)).toEqual([]);
      } finally {
        await app.close();
      }
    });
  },
);
