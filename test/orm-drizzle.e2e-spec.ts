/**
 * `nestjs-leaf/orm/sync`'s synchronous defaults with a real Drizzle on real PostgreSQL
 * (`drizzle-orm/node-postgres`, `pg-core`) and real MariaDB (`drizzle-orm/mysql2`,
 * `mysql-core`): `$defaultFn(leafIdDefault(...))` on the warm in-process path of
 * `LeafModule` (segment on the same database, embedded snowflake). Single and bulk inserts,
 * a rolled-back transaction (no row), upserts (`onConflictDoUpdate`, `onDuplicateKeyUpdate`:
 * an existing row keeps its ID), a caller-set ID kept, IDs above 2^53 exact. A cold or
 * exhausted buffer throws `SegmentNotReadyError` out of the insert: no row, never a made-up
 * ID.
 */
import { eq } from 'drizzle-orm';
import { drizzle as drizzleMysql, type MySql2Database } from 'drizzle-orm/mysql2';
import { bigint as mysqlBigint, mysqlTable, varchar as mysqlVarchar } from 'drizzle-orm/mysql-core';
import { drizzle, type NodePgDatabase } from 'drizzle-orm/node-postgres';
import { bigint, pgTable, varchar } from 'drizzle-orm/pg-core';
import type { SegmentService, SnowflakeService } from 'nestjs-leaf';
import { LeafConfigurationError, SegmentNotReadyError } from 'nestjs-leaf/errors';
import { leafIdDefault, leafIdStringDefault } from 'nestjs-leaf/orm/sync';
import { createPool, type Pool as MysqlPool } from 'mysql2/promise';
import { Pool } from 'pg';
import { startOrmLeaf, type OrmLeaf, type OrmTestDatabase } from './support/orm-leaf';
import { describeWithServices } from './support/services';

jest.setTimeout(60_000);

/** The application's references to its ID sources, set once its Leaf module is up. */
const sources: { segments?: SegmentService; snowflake?: SnowflakeService } = {};

const orders = pgTable('drizzle_orders', {
  id: bigint('id', { mode: 'bigint' })
    .primaryKey()
    .$defaultFn(leafIdDefault(() => sources.segments!, 'drizzle-orders')),
  name: varchar('name', { length: 64 }).notNull(),
});

const customers = pgTable('drizzle_customers', {
  id: bigint('id', { mode: 'bigint' })
    .primaryKey()
    .$defaultFn(leafIdDefault(() => sources.snowflake!, 'any')),
  email: varchar('email', { length: 128 }).notNull().unique(),
  name: varchar('name', { length: 64 }).notNull(),
});

const events = pgTable('drizzle_events', {
  id: bigint('id', { mode: 'bigint' })
    .primaryKey()
    .$defaultFn(leafIdDefault(() => sources.snowflake!, 'any')),
  ref: varchar('ref', { length: 20 })
    .notNull()
    .$defaultFn(leafIdStringDefault(() => sources.segments!, 'drizzle-refs')),
});

describeWithServices(
  ['postgres'],
  'Leaf IDs as Drizzle defaults ($defaultFn), on PostgreSQL',
  () => {
    let leaf: OrmLeaf;
    let database: OrmTestDatabase;
    let pool: Pool;
    let db: NodePgDatabase;

    beforeAll(async () => {
      leaf = await startOrmLeaf('postgres', {
        tags: { 'drizzle-orders': 100, 'drizzle-refs': 100, 'drizzle-cold': 100 },
        workerId: 9,
      });
      database = leaf.db;
      sources.segments = leaf.segments;
      sources.snowflake = leaf.snowflake;
      await database.query(
        'CREATE TABLE drizzle_orders (id BIGINT PRIMARY KEY, name VARCHAR(64) NOT NULL)',
      );
      await database.query(
        'CREATE TABLE drizzle_customers (id BIGINT PRIMARY KEY, email VARCHAR(128) NOT NULL UNIQUE, name VARCHAR(64) NOT NULL)',
      );
      await database.query(
        'CREATE TABLE drizzle_events (id BIGINT PRIMARY KEY, ref VARCHAR(20) NOT NULL)',
      );
      await database.query(
        'CREATE TABLE drizzle_cold (id BIGINT PRIMARY KEY, name VARCHAR(64) NOT NULL)',
      );
      pool = new Pool({ connectionString: database.url });
      db = drizzle({ client: pool });
    });

    afterAll(async () => {
      sources.segments = undefined;
      sources.snowflake = undefined;
      await pool?.end();
      await leaf?.close();
    });

    it('a warm tag: each row gets the next segment ID (bigint), read back exact', async () => {
      await sources.segments!.get('drizzle-orders'); // warms the buffer: ID 1
      const rows = await db
        .insert(orders)
        .values([{ name: 'a' }, { name: 'b' }])
        .returning();
      expect(rows).toEqual([
        { id: 2n, name: 'a' },
        { id: 3n, name: 'b' },
      ]);
      expect(await db.select().from(orders).where(eq(orders.id, 3n))).toEqual([
        { id: 3n, name: 'b' },
      ]);
      // A caller-set ID is kept ($defaultFn runs only for a missing value).
      await db.insert(orders).values({ id: 9_000_000_000_000_000_001n, name: 'set' });
      const [set] = await db.select().from(orders).where(eq(orders.name, 'set'));
      expect(set.id).toBe(9_000_000_000_000_000_001n);
    });

    it('a transaction that throws writes nothing (its IDs become gaps)', async () => {
      const failed = db.transaction(async (tx) => {
        await tx.insert(orders).values([{ name: 'rolled-back' }, { name: 'rolled-back' }]);
        throw new Error('after the insert');
      });
      await expect(failed).rejects.toThrow('after the insert');
      expect(await db.select().from(orders).where(eq(orders.name, 'rolled-back'))).toEqual([]);
    });

    it('upsert (onConflictDoUpdate): a new row gets the fresh ID, an existing row keeps its own and returns it', async () => {
      const upsert = (name: string) =>
        db
          .insert(customers)
          .values({ email: 'ada@example.com', name })
          .onConflictDoUpdate({ target: customers.email, set: { name } })
          .returning();
      const [first] = await upsert('Ada');
      expect(first.id).toBeGreaterThan(2n ** 53n); // a snowflake ID
      const [again] = await upsert('Ada L.');
      expect(again).toEqual({ id: first.id, email: 'ada@example.com', name: 'Ada L.' });
      expect(await db.select().from(customers)).toEqual([again]);
    });

    it('snowflake IDs, and a string default in a second column', async () => {
      await sources.segments!.get('drizzle-refs');
      const rows = await db
        .insert(events)
        .values(Array.from({ length: 50 }, () => ({})))
        .returning();
      expect(new Set(rows.map((r) => r.id)).size).toBe(50);
      for (const row of rows) expect((row.id >> 12n) & 1023n).toBe(9n);
      // Above 2^53, read back exact.
      const [back] = await db.select().from(events).where(eq(events.id, rows[49].id));
      expect(back.id).toBe(rows[49].id);
      expect(rows.map((r) => r.ref)).toEqual(Array.from({ length: 50 }, (_, i) => String(i + 2)));
    });

    it('no ID at hand: the insert throws SegmentNotReadyError and writes nothing; it serves once warm', async () => {
      const handle = sources.segments!.generator('drizzle-cold');
      const cold = pgTable('drizzle_cold', {
        id: bigint('id', { mode: 'bigint' }).primaryKey().$defaultFn(leafIdDefault(handle)),
        name: varchar('name', { length: 64 }).notNull(),
      });
      // Drizzle calls $defaultFn synchronously for every row while it builds the statement:
      // 20,000 rows outrun what the buffers hold (step 100), and the next range is still loading.
      // (Drizzle throws it while building the statement, out of the awaited insert.)
      const error: unknown = await (async () => {
        await db
          .insert(cold)
          .values(Array.from({ length: 20_000 }, (_, i) => ({ name: `cold-${i}` })));
      })().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(SegmentNotReadyError);
      expect(await database.query(`SELECT id FROM drizzle_cold`)).toEqual([]);

      await sources.segments!.get('drizzle-cold'); // waits for the range being loaded
      const [row] = await db.insert(cold).values({ name: 'cold-warm' }).returning();
      expect(typeof row.id).toBe('bigint');
    });

    it('refuses a source with neither getSync nor next at once', () => {
      expect(() => leafIdDefault({} as never, 'x')).toThrow(LeafConfigurationError);
      expect(() => leafIdDefault(sources.segments!)).toThrow(LeafConfigurationError);
    });
  },
);

/** The MariaDB application's references to its ID sources. */
const mysqlSources: { segments?: SegmentService; snowflake?: SnowflakeService } = {};

const mysqlOrders = mysqlTable('drizzle_orders', {
  id: mysqlBigint('id', { mode: 'bigint' })
    .primaryKey()
    .$defaultFn(leafIdDefault(() => mysqlSources.segments!, 'drizzle-orders')),
  name: mysqlVarchar('name', { length: 64 }).notNull(),
});

const mysqlCustomers = mysqlTable('drizzle_customers', {
  id: mysqlBigint('id', { mode: 'bigint' })
    .primaryKey()
    .$defaultFn(leafIdDefault(() => mysqlSources.snowflake!, 'any')),
  email: mysqlVarchar('email', { length: 128 }).notNull().unique(),
  name: mysqlVarchar('name', { length: 64 }).notNull(),
});

describeWithServices(['mysql'], 'Leaf IDs as Drizzle defaults ($defaultFn), on MariaDB', () => {
  let leaf: OrmLeaf;
  let database: OrmTestDatabase;
  let pool: MysqlPool;
  let db: MySql2Database;

  beforeAll(async () => {
    leaf = await startOrmLeaf('mysql', {
      tags: { 'drizzle-orders': 100, 'drizzle-cold': 100 },
      workerId: 0,
    });
    database = leaf.db;
    mysqlSources.segments = leaf.segments;
    mysqlSources.snowflake = leaf.snowflake;
    await database.query(
      'CREATE TABLE drizzle_orders (id BIGINT PRIMARY KEY, name VARCHAR(64) NOT NULL)',
    );
    await database.query(
      'CREATE TABLE drizzle_customers (id BIGINT PRIMARY KEY, email VARCHAR(128) NOT NULL UNIQUE, name VARCHAR(64) NOT NULL)',
    );
    await database.query(
      'CREATE TABLE drizzle_cold (id BIGINT PRIMARY KEY, name VARCHAR(64) NOT NULL)',
    );
    // BIGINT above 2^53 must come back as a string, never a rounded number.
    pool = createPool({ uri: database.url, supportBigNumbers: true, bigNumberStrings: true });
    db = drizzleMysql({ client: pool });
  });

  afterAll(async () => {
    mysqlSources.segments = undefined;
    mysqlSources.snowflake = undefined;
    await pool?.end();
    await leaf?.close();
  });

  it('single and bulk inserts: each row gets the next segment ID (bigint), read back exact', async () => {
    await mysqlSources.segments!.get('drizzle-orders'); // warms the buffer: ID 1
    expect(await db.insert(mysqlOrders).values({ name: 'one' }).$returningId()).toEqual([
      { id: 2n },
    ]);
    const bulk = await db
      .insert(mysqlOrders)
      .values(Array.from({ length: 50 }, (_, i) => ({ name: `bulk-${i}` })))
      .$returningId();
    expect(bulk).toEqual(Array.from({ length: 50 }, (_, i) => ({ id: BigInt(i + 3) })));
    expect(await db.select().from(mysqlOrders).where(eq(mysqlOrders.id, 52n))).toEqual([
      { id: 52n, name: 'bulk-49' },
    ]);
  });

  it('a transaction that throws writes nothing', async () => {
    const failed = db.transaction(async (tx) => {
      await tx.insert(mysqlOrders).values([{ name: 'rolled-back' }, { name: 'rolled-back' }]);
      throw new Error('after the insert');
    });
    await expect(failed).rejects.toThrow('after the insert');
    expect(await db.select().from(mysqlOrders).where(eq(mysqlOrders.name, 'rolled-back'))).toEqual(
      [],
    );
  });

  it('upsert (onDuplicateKeyUpdate): a new row gets the fresh ID, an existing row keeps its own', async () => {
    const upsert = (name: string) =>
      db
        .insert(mysqlCustomers)
        .values({ email: 'ada@example.com', name })
        .onDuplicateKeyUpdate({ set: { name } });
    const [first] = await upsert('Ada').$returningId();
    expect(first.id).toBeGreaterThan(2n ** 53n); // a snowflake ID
    await upsert('Ada L.');
    expect(await db.select().from(mysqlCustomers)).toEqual([
      { id: first.id, email: 'ada@example.com', name: 'Ada L.' },
    ]);
    // MySQL returns no key for an updated row; Drizzle 0.45's $returningId() then fails
    // (TypeError): read the row back by its unique key instead.
    await expect(upsert('Ada K.').$returningId()).rejects.toThrow(TypeError);
  });

  it('an ID the caller sets is kept and round-trips exactly above 2^53; a pool without supportBigNumbers would round it', async () => {
    await db.insert(mysqlOrders).values({ id: 9_000_000_000_000_000_001n, name: 'set' });
    const [set] = await db.select().from(mysqlOrders).where(eq(mysqlOrders.name, 'set'));
    expect(set.id).toBe(9_000_000_000_000_000_001n);

    const plain = createPool({ uri: database.url });
    try {
      const [rounded] = await drizzleMysql({ client: plain })
        .select()
        .from(mysqlOrders)
        .where(eq(mysqlOrders.name, 'set'));
      expect(rounded.id).toBe(9_000_000_000_000_000_000n); // mysql2 passed it through a number
    } finally {
      await plain.end();
    }
  });

  it('no ID at hand: the insert throws SegmentNotReadyError and writes nothing; it serves once warm', async () => {
    const cold = mysqlTable('drizzle_cold', {
      id: mysqlBigint('id', { mode: 'bigint' })
        .primaryKey()
        .$defaultFn(leafIdDefault(mysqlSources.segments!.generator('drizzle-cold'))),
      name: mysqlVarchar('name', { length: 64 }).notNull(),
    });
    const error: unknown = await (async () => {
      await db.insert(cold).values({ name: 'cold' }); // a tag never used: its buffer is empty
    })().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SegmentNotReadyError);
    expect(await database.query(`SELECT id FROM drizzle_cold`)).toEqual([]);

    await mysqlSources.segments!.get('drizzle-cold');
    const [row] = await db.insert(cold).values({ name: 'warm' }).$returningId();
    expect(typeof row.id).toBe('bigint');
  });
});
