/**
 * `nestjs-leaf/orm`'s synchronous defaults with a real Drizzle on real PostgreSQL:
 * `$defaultFn(leafIdDefault(...))` on the warm in-process path of `LeafModule` (segment on
 * the same database, embedded snowflake). A cold or exhausted buffer throws
 * `SegmentNotReadyError` out of the insert: no row, never a made-up ID.
 */
import { ScheduleModule } from '@nestjs/schedule';
import { Test, type TestingModule } from '@nestjs/testing';
import { eq } from 'drizzle-orm';
import { drizzle, type NodePgDatabase } from 'drizzle-orm/node-postgres';
import { bigint, pgTable, varchar } from 'drizzle-orm/pg-core';
import { LeafModule, SegmentService, SnowflakeService } from 'nestjs-leaf';
import { LeafConfigurationError, SegmentNotReadyError } from 'nestjs-leaf/errors';
import { leafIdDefault, leafIdStringDefault } from 'nestjs-leaf/orm';
import { Pool } from 'pg';
import type { DataSource } from 'typeorm';
import { tempDir } from './support/app';
import { createPostgresTestDatabase, type PostgresTestDatabase } from './support/postgres-database';
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
    let database: PostgresTestDatabase;
    let dataSource: DataSource;
    let app: TestingModule;
    let pool: Pool;
    let db: NodePgDatabase;
    const state = tempDir('leaf-orm-drizzle');

    beforeAll(async () => {
      database = await createPostgresTestDatabase({ migrate: true });
      for (const tag of ['drizzle-orders', 'drizzle-refs', 'drizzle-cold'])
        await database.query(`INSERT INTO leaf_alloc (biz_tag, max_id, step) VALUES ($1, 1, 100)`, [
          tag,
        ]);
      await database.query(
        'CREATE TABLE drizzle_orders (id BIGINT PRIMARY KEY, name VARCHAR(64) NOT NULL)',
      );
      await database.query(
        'CREATE TABLE drizzle_events (id BIGINT PRIMARY KEY, ref VARCHAR(20) NOT NULL)',
      );
      await database.query(
        'CREATE TABLE drizzle_cold (id BIGINT PRIMARY KEY, name VARCHAR(64) NOT NULL)',
      );
      dataSource = await database.openDataSource();
      app = await Test.createTestingModule({
        imports: [
          ScheduleModule.forRoot(),
          LeafModule.forRoot({
            segment: { dataSource },
            snowflake: { workerId: 9, stateDir: state.path },
          }),
        ],
      }).compile();
      app.useLogger(false);
      await app.init();
      sources.segments = app.get(SegmentService);
      sources.snowflake = app.get(SnowflakeService);
      pool = new Pool({ connectionString: database.url });
      db = drizzle({ client: pool });
    });

    afterAll(async () => {
      sources.segments = undefined;
      sources.snowflake = undefined;
      await pool?.end();
      await app?.close();
      await dataSource?.destroy();
      await database?.drop();
      state.remove();
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

    it('snowflake IDs, and a string default in a second column', async () => {
      await sources.segments!.get('drizzle-refs');
      const rows = await db
        .insert(events)
        .values(Array.from({ length: 50 }, () => ({})))
        .returning();
      expect(new Set(rows.map((r) => r.id)).size).toBe(50);
      for (const row of rows) expect((row.id >> 12n) & 1023n).toBe(9n);
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
