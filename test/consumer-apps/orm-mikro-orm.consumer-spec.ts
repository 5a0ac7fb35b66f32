import { checkProgram, ormConsumerAppSuite } from './orm-consumer-app-suite';

/**
 * Through MikroORM, with the README's entities (`Order`, `OrderLine`) and its `OrdersService`
 * (an order and its lines, one flush); on MariaDB the page's `src/orm.ts`. One program for
 * both databases: everything goes through `@mikro-orm/core`'s `EntityManager`. (MikroORM 7.2
 * answers `upsert`'s key on MariaDB as a decimal string: compared as `String(id)`.)
 */
const check = checkProgram(
  `import { MikroORM } from '@mikro-orm/core';
import { AppModule } from './app.module.js';
import { Order, OrderLine } from './order.entity.js';
import { OrdersService } from './orders.service.js';
`,
  `    const orm = app.get(MikroORM);
    const one = orm.em.fork();
    const created = one.create(Order, { reference: 'created' });
    await one.flush();
    const many = orm.em.fork();
    const bulk = ['bulk-1', 'bulk-2', 'bulk-3'].map((reference) => many.create(Order, { reference }));
    await many.flush();
    const parent = await app.get(OrdersService).create('parent', ['a', 'b']);
    let rolledBack = 'committed';
    await orm.em
      .fork()
      .transactional(async (em) => {
        em.create(Order, { reference: 'rolled-back' });
        await em.flush();
        throw new Error('rolled back on purpose');
      })
      .catch((error: Error) => (rolledBack = error.message));
    const upsert = async () => {
      const order = await orm.em
        .fork()
        .upsert(Order, { reference: 'upserted' }, { onConflictFields: ['reference'] });
      return String(order.id);
    };
    const upsertFirst = await upsert();
    const upsertSecond = await upsert();
    const report = {
      created: String(created.id),
      bulk: bulk.map((order) => String(order.id)),
      parent: String(parent.id),
      children: parent.lines.map((line) => String(line.id)),
      rolledBack,
      rolledBackReference: 'rolled-back',
      upsertFirst,
      upsertSecond,
      tables: {
        orders: (await orm.em.fork().findAll(Order)).map((order) => String(order.id)),
        order_lines: (await orm.em.fork().findAll(OrderLine)).map((line) => String(line.id)),
      },
    };
`,
);

ormConsumerAppSuite({
  mariadbSection: true,
  name: 'MikroORM',
  page: 'mikro-orm',
  check,
  firstStartStopsAtMissingTag: true,
  tables: { orders: 'orders', order_lines: 'order-lines' },
  referenceTable: 'orders',
});
