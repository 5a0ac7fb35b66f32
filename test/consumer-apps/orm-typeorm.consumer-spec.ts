import { checkProgram, ormConsumerAppSuite } from './orm-consumer-app-suite';

/** Through TypeORM, with the README's entities (`Order`, `OrderLine`, `AuditEvent`). */
const check = checkProgram(
  `import { DataSource } from 'typeorm';
import { AppModule } from './app.module.js';
import { AuditEvent } from './audit-event.entity.js';
import { Order } from './order.entity.js';
`,
  `    const dataSource = app.get(DataSource);
    const orders = dataSource.getRepository(Order);
    const created = await orders.save(orders.create({ reference: 'created' }));
    const bulk = await orders.insert([{ reference: 'bulk-1' }, { reference: 'bulk-2' }, { reference: 'bulk-3' }]);
    const parent = await orders.save(
      orders.create({ reference: 'parent', lines: [{ sku: 'a' }, { sku: 'b' }] }),
    );
    let rolledBack = 'committed';
    await dataSource
      .transaction(async (manager) => {
        await manager.save(Order, { reference: 'rolled-back' });
        throw new Error('rolled back on purpose');
      })
      .catch((error: Error) => (rolledBack = error.message));
    await orders.upsert({ reference: 'upserted' }, ['reference']);
    const upsertFirst = (await orders.findOneByOrFail({ reference: 'upserted' })).id;
    await orders.upsert({ reference: 'upserted' }, ['reference']);
    const upsertSecond = (await orders.findOneByOrFail({ reference: 'upserted' })).id;
    await dataSource.getRepository(AuditEvent).save([{ action: 'a' }, { action: 'b' }]);
    const ids = async (table: string) =>
      ((await dataSource.query('SELECT id FROM ' + table)) as Array<{ id: string }>).map((row) => String(row.id));
    const report = {
      created: created.id,
      bulk: bulk.identifiers.map((identifier) => String(identifier.id)),
      parent: parent.id,
      children: (parent.lines ?? []).map((line) => String(line.id)),
      rolledBack,
      rolledBackReference: 'rolled-back',
      upsertFirst,
      upsertSecond,
      tables: {
        orders: (await orders.find()).map((order) => order.id),
        order_lines: await ids('order_lines'),
        audit_events: await ids('audit_events'),
      },
    };
`,
);

ormConsumerAppSuite({
  page: 'typeorm',
  name: 'TypeORM',
  check,
  tables: { orders: 'orders', order_lines: 'order-lines', audit_events: 'snowflake' },
  referenceTable: 'orders',
});
