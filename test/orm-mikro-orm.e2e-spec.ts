/**
 * `nestjs-leaf/orm/sync`'s synchronous default as MikroORM 7's `onCreate`, with a real MikroORM
 * (`@mikro-orm/postgresql`, `@mikro-orm/mariadb`) on real PostgreSQL and real MariaDB, and a
 * real `LeafModule` in a Nest testing module (segment tags in `leaf_alloc` on the same
 * database, embedded snowflake). The tables come from MikroORM's schema generator.
 *
 * What it proves, and where `onCreate` runs:
 * - `em.create()` runs it at once (MikroORM 7's `processOnCreateHooksEarly`, on by default),
 *   children created through a relation included; an entity created with the option off, or
 *   persisted as an instance, gets its ID when `flush()` computes the change sets. Either way
 *   the key is a bigint (`p.bigint()`) or a decimal string (`p.bigint('string')`), exact
 *   above 2^53, and an ID the caller set is kept.
 * - Many entities in one flush: one ID each, in multi-row INSERTs of MikroORM's `batchSize`.
 * - `em.transactional` that throws writes nothing (its IDs become gaps).
 * - `em.upsert` / `upsertMany` run `onCreate` too: a new row gets the fresh ID, an existing
 *   one keeps its own (MikroORM leaves the key out of the update) and the entity returned
 *   carries the row's ID.
 * - No ID at hand (a cold tag, or one flush with more new entities than the buffers hold):
 *   `SegmentNotReadyError` out of `em.create` or `flush`, and no row (MikroORM forgets the
 *   new entities of a flush that threw: they must be created again).
 */
import { defineEntity, p, type MikroORM } from '@mikro-orm/core';
import { MikroORM as MariaDbMikroORM } from '@mikro-orm/mariadb';
import { MikroORM as PostgreSqlMikroORM } from '@mikro-orm/postgresql';
import type { SegmentService, SnowflakeService } from 'nestjs-leaf';
import { SegmentNotReadyError } from 'nestjs-leaf/errors';
import { leafIdDefault, leafIdStringDefault } from 'nestjs-leaf/orm/sync';
import { keyColumn, startOrmLeaf, type OrmLeaf, type OrmTestDatabase } from './support/orm-leaf';
import { describeWithServices } from './support/services';

jest.setTimeout(60_000);

/** The application's references to its ID sources, set once its Leaf module is up. */
interface Sources {
  segments?: SegmentService;
  snowflake?: SnowflakeService;
}

/** The entities of one ORM instance (each database its own: discovery writes into them). */
function entities(sources: Sources) {
  const Order = defineEntity({
    name: 'Order',
    tableName: 'mikro_orders',
    properties: {
      id: p
        .bigint()
        .primary()
        .autoincrement(false)
        .onCreate(leafIdDefault(() => sources.segments!, 'mikro-orders')),
      name: p.string().length(64),
      lines: () => p.oneToMany(OrderLine).mappedBy('order'),
    },
  });
  const OrderLine = defineEntity({
    name: 'OrderLine',
    tableName: 'mikro_order_lines',
    properties: {
      id: p
        .bigint('string')
        .primary()
        .autoincrement(false)
        .onCreate(leafIdStringDefault(() => sources.segments!, 'mikro-lines')),
      sku: p.string().length(64),
      order: () => p.manyToOne(Order),
    },
  });
  const Customer = defineEntity({
    name: 'Customer',
    tableName: 'mikro_customers',
    properties: {
      id: p
        .bigint()
        .primary()
        .autoincrement(false)
        .onCreate(leafIdDefault(() => sources.snowflake!, 'any')),
      email: p.string().length(128).unique(),
      name: p.string().length(64),
    },
  });
  const Cold = defineEntity({
    name: 'Cold',
    tableName: 'mikro_cold',
    properties: {
      id: p
        .bigint()
        .primary()
        .autoincrement(false)
        .onCreate(leafIdDefault(() => sources.segments!, 'mikro-cold')),
      name: p.string().length(64),
    },
  });
  return { Order, OrderLine, Customer, Cold };
}

const TAGS = { 'mikro-orders': 1000, 'mikro-lines': 1000, 'mikro-cold': 100 };

for (const kind of ['postgres', 'mysql'] as const) {
  const label = kind === 'postgres' ? 'PostgreSQL' : 'MariaDB';
  describeWithServices([kind], `Leaf IDs on MikroORM 7 entities (onCreate), on ${label}`, () => {
    const sources: Sources = {};
    const { Order, OrderLine, Customer, Cold } = entities(sources);
    const queries: string[] = [];
    let leaf: OrmLeaf;
    let db: OrmTestDatabase;
    let orm: MikroORM;
    const text = kind === 'postgres' ? 'TEXT' : 'CHAR';
    const param = (n: number) => (kind === 'postgres' ? `$${n}` : '?');

    /** `SELECT id FROM table [WHERE name = ...]` as decimal strings, in ID order. */
    async function idsIn(table: string, name?: string): Promise<string[]> {
      const rows = await db.query<{ id: string }>(
        `SELECT CAST(id AS ${text}) AS id FROM ${table}` +
          (name === undefined ? '' : ` WHERE name = ${param(1)}`),
        name === undefined ? [] : [name],
      );
      return rows.map((row) => row.id).sort((a, b) => (BigInt(a) < BigInt(b) ? -1 : 1));
    }

    beforeAll(async () => {
      leaf = await startOrmLeaf(kind, { tags: TAGS, workerId: 0 });
      db = leaf.db;
      sources.segments = leaf.segments;
      sources.snowflake = leaf.snowflake;
      for (const tag of ['mikro-orders', 'mikro-lines']) await leaf.segments.get(tag); // warm: ID 1

      const options = {
        entities: [Order, OrderLine, Customer, Cold],
        clientUrl: db.url,
        debug: ['query' as const],
        colors: false,
        logger: (message: string) => queries.push(message),
      };
      orm =
        kind === 'postgres'
          ? await PostgreSqlMikroORM.init(options)
          : await MariaDbMikroORM.init(options);
      await orm.schema.create();
    });

    afterAll(async () => {
      sources.segments = undefined;
      sources.snowflake = undefined;
      await orm?.close();
      await leaf?.close();
    });

    it('the schema generator makes the key a plain BIGINT: no default, identity or auto-increment', async () => {
      const column = await keyColumn(db, 'mikro_orders');
      expect(column.data_type).toBe('bigint');
      expect(column.column_default).toBeNull();
      expect(column.extra).toBe(kind === 'postgres' ? 'NO' : '');

      // Without .autoincrement(false), MikroORM makes a lone numeric key an identity.
      const Plain = defineEntity({
        name: 'Plain',
        properties: {
          id: p
            .bigint()
            .primary()
            .onCreate(() => 1n),
          name: p.string(),
        },
      });
      const options = { entities: [Plain], clientUrl: db.url, connect: false };
      const plain =
        kind === 'postgres' ? new PostgreSqlMikroORM(options) : new MariaDbMikroORM(options);
      try {
        expect(await plain.schema.getCreateSchemaSQL({ wrap: false })).toMatch(
          kind === 'postgres'
            ? /"id" bigserial primary key/
            : /`id` bigint unsigned not null auto_increment/,
        );
      } finally {
        await plain.close();
      }
    });

    it('em.create takes the ID at once; flush writes it; read back exact', async () => {
      const em = orm.em.fork();
      const order = em.create(Order, { name: 'create' });
      expect(order.id).toBe(2n); // onCreate ran in em.create, before any flush
      await em.flush();
      expect(await idsIn('mikro_orders', 'create')).toEqual(['2']);
      const found = await orm.em.fork().findOneOrFail(Order, { id: 2n });
      expect(found).toMatchObject({ id: 2n, name: 'create' });
    });

    it('with processOnCreateHooksEarly off, the ID is taken when flush computes the change sets', async () => {
      const em = orm.em.fork();
      const order = em.create(Order, { name: 'late' }, { processOnCreateHooksEarly: false });
      expect(order.id).toBeUndefined();
      await em.flush();
      expect(typeof order.id).toBe('bigint');
      expect(await idsIn('mikro_orders', 'late')).toEqual([order.id.toString()]);
    });

    it('bulk: 500 entities in one flush get 500 consecutive IDs, in multi-row INSERTs (batchSize 300)', async () => {
      const em = orm.em.fork();
      const orders = Array.from({ length: 500 }, () => em.create(Order, { name: 'bulk' }));
      const first = orders[0].id;
      expect(orders.map((order) => order.id)).toEqual(
        Array.from({ length: 500 }, (_, i) => first + BigInt(i)),
      );
      queries.length = 0;
      await em.flush();
      const inserts = queries.filter((query) => /insert into .mikro_orders/.test(query));
      expect(inserts.map((query) => /(\d+) rows affected/.exec(query)?.[1])).toEqual([
        '300',
        '200',
      ]);
      expect(await idsIn('mikro_orders', 'bulk')).toEqual(orders.map((order) => String(order.id)));
    });

    it('nested create: the parent and its cascaded children each get an ID; the children point at the exact parent', async () => {
      const em = orm.em.fork();
      const order = em.create(Order, {
        name: 'nested',
        lines: [{ sku: 'a' }, { sku: 'b' }, { sku: 'c' }],
      });
      const lines = order.lines.getItems();
      for (const line of lines) expect(line.id).toMatch(/^\d+$/); // a decimal string
      await em.flush();
      const rows = await db.query<{ id: string; order_id: string }>(
        `SELECT CAST(id AS ${text}) AS id, CAST(order_id AS ${text}) AS order_id FROM mikro_order_lines ORDER BY id`,
      );
      expect(rows).toEqual(lines.map((line) => ({ id: line.id, order_id: String(order.id) })));
      const back = await orm.em
        .fork()
        .findOneOrFail(Order, { id: order.id }, { populate: ['lines'] });
      expect(back.lines.getItems().map((line) => line.id)).toEqual(lines.map((line) => line.id));
    });

    it('em.transactional that throws writes nothing', async () => {
      const taken: bigint[] = [];
      const failed = orm.em.fork().transactional(async (em) => {
        taken.push(em.create(Order, { name: 'rolled-back' }).id);
        taken.push(em.create(Order, { name: 'rolled-back' }).id);
        await em.flush();
        throw new Error('after the flush');
      });
      await expect(failed).rejects.toThrow('after the flush');
      expect(taken).toHaveLength(2);
      expect(await idsIn('mikro_orders', 'rolled-back')).toEqual([]);
      // The IDs are gaps: the next entity gets a later one.
      expect(orm.em.fork().create(Order, { name: 'after' }).id).toBeGreaterThan(taken[1]);
    });

    it('upsert runs onCreate: a new row gets the fresh ID, an existing row keeps its own and the entity carries it', async () => {
      const first = await orm.em
        .fork()
        .upsert(
          Customer,
          { email: 'ada@example.com', name: 'Ada' },
          { onConflictFields: ['email'] },
        );
      expect(first.id).toBeGreaterThan(2n ** 53n); // a snowflake ID
      const again = await orm.em
        .fork()
        .upsert(
          Customer,
          { email: 'ada@example.com', name: 'Ada L.' },
          { onConflictFields: ['email'] },
        );
      expect(again).toMatchObject({ id: first.id, name: 'Ada L.' });
      // Without onConflictFields: MikroORM takes the unique columns given (email).
      const third = await orm.em.fork().upsert(Customer, { email: 'ada@example.com', name: 'A' });
      expect(third.id).toBe(first.id);
      // By the key the caller passes: an update of that row.
      const byId = await orm.em
        .fork()
        .upsert(Customer, { id: first.id, email: 'ada@example.com', name: 'Ada K.' });
      expect(byId.id).toBe(first.id);

      const many = await orm.em.fork().upsertMany(
        Customer,
        [
          { email: 'ada@example.com', name: 'Ada M.' },
          { email: 'bob@example.com', name: 'Bob' },
        ],
        { onConflictFields: ['email'] },
      );
      // MikroORM 7.2.1 on MariaDB reads the keys of upsertMany back without the bigint type
      // (the driver's decimal string); exact either way.
      expect(many.map((customer) => String(customer.id))).toEqual([
        String(first.id),
        expect.stringMatching(/^\d{18,19}$/),
      ]);
      expect(typeof many[1].id).toBe(kind === 'postgres' ? 'bigint' : 'string');
      const rows = await db.query<{ id: string; email: string; name: string }>(
        `SELECT CAST(id AS ${text}) AS id, email, name FROM mikro_customers ORDER BY email`,
      );
      expect(rows).toEqual([
        { id: String(first.id), email: 'ada@example.com', name: 'Ada M.' },
        { id: String(many[1].id), email: 'bob@example.com', name: 'Bob' },
      ]);
    });

    it('an ID the caller sets is kept, and one above 2^53 round-trips exactly', async () => {
      const em = orm.em.fork();
      const order = em.create(Order, {
        id: 9_000_000_000_000_000_001n,
        name: 'set',
        lines: [{ id: '9000000000000000003', sku: 'set' }],
      });
      expect(order.id).toBe(9_000_000_000_000_000_001n);
      await em.flush();
      expect(await idsIn('mikro_orders', 'set')).toEqual(['9000000000000000001']);
      const back = await orm.em
        .fork()
        .findOneOrFail(Order, { id: 9_000_000_000_000_000_001n }, { populate: ['lines'] });
      expect(back.id).toBe(9_000_000_000_000_000_001n);
      expect(back.lines.getItems().map((line) => line.id)).toEqual(['9000000000000000003']);
    });

    it('no ID at hand: a cold tag or an oversized flush throws SegmentNotReadyError and writes nothing; it serves once warm', async () => {
      // A cold tag: em.create throws (its range load has just been started).
      const em = orm.em.fork();
      expect(() => em.create(Cold, { name: 'cold' })).toThrow(SegmentNotReadyError);
      await em.flush();
      expect(await idsIn('mikro_cold')).toEqual([]);

      // Warm, step 100: one flush computing 1,000 new keys outruns the two buffers.
      await sources.segments!.get('mikro-cold');
      const late = orm.em.fork();
      for (let i = 0; i < 1000; i++)
        late.create(Cold, { name: 'big' }, { processOnCreateHooksEarly: false });
      await expect(late.flush()).rejects.toBeInstanceOf(SegmentNotReadyError);
      expect(await idsIn('mikro_cold')).toEqual([]);
      // MikroORM forgets the new entities of a flush that threw: flushing again writes nothing.
      expect(late.getUnitOfWork().getPersistStack().size).toBe(0);
      await sources.segments!.get('mikro-cold');
      await late.flush();
      expect(await idsIn('mikro_cold')).toEqual([]);

      const warm = orm.em.fork();
      const row = warm.create(Cold, { name: 'warm' });
      await warm.flush();
      expect(await idsIn('mikro_cold')).toEqual([String(row.id)]);
    });
  });
}
