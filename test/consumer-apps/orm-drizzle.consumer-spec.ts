import { checkProgram, type ConsumerDatabase, ormConsumerAppSuite } from './orm-consumer-app-suite';

/**
 * Through Drizzle, with the README's tables (`orders`, `orderLines`) and its `OrdersService`
 * (an order, then its lines, in one `db.transaction`); on MariaDB the page's `src/schema.ts`
 * and `src/orders.service.ts`. The two dialects differ in how an insert answers its keys
 * (PostgreSQL: `.returning()`, MySQL: `.$returningId()`) and in the upsert
 * (`onConflictDoUpdate`, `onDuplicateKeyUpdate`), so each database has its own program.
 */
function check(database: ConsumerDatabase): string {
  const postgres = database === 'postgres';
  const answer = postgres ? '.returning()' : '.$returningId()';
  const upsert = postgres
    ? `.onConflictDoUpdate({ target: orders.reference, set: { reference: 'upserted' } }).returning()`
    : `.onDuplicateKeyUpdate({ set: { reference: 'upserted' } })`;
  return checkProgram(
    `import { eq } from 'drizzle-orm';
import { AppModule } from './app.module.js';
import { OrdersService } from './orders.service.js';
import { DRIZZLE, orderLines, orders, type Database } from './schema.js';
`,
    `    const db = app.get<Database>(DRIZZLE);
    const [created] = await db.insert(orders).values({ reference: 'created' })${answer};
    const bulk = await db
      .insert(orders)
      .values([{ reference: 'bulk-1' }, { reference: 'bulk-2' }, { reference: 'bulk-3' }])${answer};
    const parent = await app.get(OrdersService).create('parent', ['a', 'b']);
    let rolledBack = 'committed';
    await db
      .transaction(async (tx) => {
        await tx.insert(orders).values({ reference: 'rolled-back' });
        throw new Error('rolled back on purpose');
      })
      .catch((error: Error) => (rolledBack = error.message));
    const upsert = async () => {
      const answered = await db.insert(orders).values({ reference: 'upserted' })${upsert};
      const [row] = await db.select().from(orders).where(eq(orders.reference, 'upserted'));
      ${postgres ? "if (String(answered[0].id) !== String(row.id)) throw new Error('returning() answered another ID');" : 'void answered;'}
      return String(row.id);
    };
    const upsertFirst = await upsert();
    const upsertSecond = await upsert();
    const report = {
      created: String(created.id),
      bulk: bulk.map((row) => String(row.id)),
      parent: String(parent.id),
      children: parent.lines.map((line) => String(line.id)),
      rolledBack,
      rolledBackReference: 'rolled-back',
      upsertFirst,
      upsertSecond,
      tables: {
        orders: (await db.select().from(orders)).map((row) => String(row.id)),
        order_lines: (await db.select().from(orderLines)).map((row) => String(row.id)),
      },
    };
`,
  );
}

ormConsumerAppSuite({
  mariadbSection: true,
  name: 'Drizzle',
  page: 'drizzle',
  check,
  firstStartStopsAtMissingTag: true,
  tables: { orders: 'orders', order_lines: 'order-lines' },
  referenceTable: 'orders',
});
