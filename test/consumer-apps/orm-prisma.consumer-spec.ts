import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type AppContext, checkProgram, ormConsumerAppSuite } from './orm-consumer-app-suite';

/**
 * Through Prisma 7 (`leafPrismaIds`), with the README's schema (`Order`, `OrderLine`) and its
 * `PrismaModule`, imported next to Setup's `AppModule` as the section's excerpt says.
 */
const check = checkProgram(
  `import { Module } from '@nestjs/common';
import { AppModule } from './app.module.js';
import { PrismaModule } from './prisma.module.js';
import { PrismaService } from './prisma.service.js';

@Module({ imports: [AppModule, PrismaModule] })
class CheckModule {}
`,
  `    const prisma = app.get<PrismaService>(PrismaService);
    const created = await prisma.order.create({ data: { reference: 'created' } });
    const references = ['bulk-1', 'bulk-2', 'bulk-3'];
    await prisma.order.createMany({ data: references.map((reference) => ({ reference })) });
    const bulk = await prisma.order.findMany({ where: { reference: { in: references } } });
    const parent = await prisma.order.create({
      data: { reference: 'parent', lines: { create: [{ sku: 'a' }, { sku: 'b' }] } },
      include: { lines: true },
    });
    let rolledBack = 'committed';
    await prisma
      .$transaction(async (tx) => {
        await tx.order.create({ data: { reference: 'rolled-back' } });
        throw new Error('rolled back on purpose');
      })
      .catch((error: Error) => (rolledBack = error.message));
    const upsert = () =>
      prisma.order.upsert({
        where: { reference: 'upserted' },
        create: { reference: 'upserted' },
        update: {},
      });
    const upsertFirst = (await upsert()).id.toString();
    const upsertSecond = (await upsert()).id.toString();
    const report = {
      created: created.id.toString(),
      bulk: bulk.map((order) => order.id.toString()),
      parent: parent.id.toString(),
      children: parent.lines.map((line) => line.id.toString()),
      rolledBack,
      rolledBackReference: 'rolled-back',
      upsertFirst,
      upsertSecond,
      tables: {
        orders: (await prisma.order.findMany()).map((order) => order.id.toString()),
        order_lines: (await prisma.orderLine.findMany()).map((line) => line.id.toString()),
      },
    };
`,
  'CheckModule',
);

/** Replaces `from` by `to` in the app's file, failing when the README no longer has `from`. */
function change(app: AppContext, path: string, from: string, to: string): void {
  const file = join(app.dir, path);
  const text = readFileSync(file, 'utf8');
  if (!text.includes(from)) throw new Error(`${path} has no \`${from}\` to change for MariaDB`);
  writeFileSync(file, text.replace(from, to));
}

ormConsumerAppSuite({
  page: 'prisma',
  name: 'Prisma',
  check,
  tables: { orders: 'orders', order_lines: 'order-lines' },
  referenceTable: 'orders',
  env: (database, url) => ({
    PRISMA_DATABASE_URL: database === 'postgres' ? url : url.replace(/^mysql:/, 'mariadb:'),
    // `prisma generate` does not use the schema engine; without a path to one the CLI
    // downloads it from binaries.prisma.sh, which this machine cannot reach.
    PRISMA_SCHEMA_ENGINE_BINARY: '/bin/false',
  }),
  // "On MariaDB or MySQL": the provider, the adapter's package and the adapter.
  prepare: async (app, database) => {
    if (database !== 'mariadb') return;
    change(app, 'prisma/schema.prisma', 'provider = "postgresql"', 'provider = "mysql"');
    change(
      app,
      'src/prisma.service.ts',
      "import { PrismaPg } from '@prisma/adapter-pg';",
      "import { PrismaMariaDb } from '@prisma/adapter-mariadb';",
    );
    change(
      app,
      'src/prisma.service.ts',
      'new PrismaPg({ connectionString: process.env.PRISMA_DATABASE_URL })',
      'new PrismaMariaDb(process.env.PRISMA_DATABASE_URL!)',
    );
    await app.run(['npm', 'install', '@prisma/adapter-mariadb@^7']);
  },
});
