import { describeWithServices } from '../support/services';
import { expectOrmInsertsClean, ormInserts } from './scenarios/orm-inserts';

jest.setTimeout(240_000);

const ROWS = 5_000;

/**
 * A small step: the three processes load ranges of the tag concurrently, many times. TypeORM's
 * subscriber waits for ranges (`getIds`); MikroORM's `onCreate` takes a whole flush's IDs
 * synchronously, so its step stays well above one flush (500 entities), as
 * docs/integrations/mikro-orm.md tells users (with 500 some flushes find no range ready).
 * Drizzle's IDs are snowflake IDs.
 */
const STEPS = { typeorm: 500, drizzle: 500, 'mikro-orm': 2000, prisma: 500 } as const;

describeWithServices(
  ['postgres'],
  `system (CI subset): three processes × ${ROWS.toLocaleString('en')} inserts through each ORM on PostgreSQL`,
  () => {
    it.each(['typeorm', 'drizzle', 'mikro-orm', 'prisma'] as const)(
      '%s: 0 primary-key violations, every ID valid',
      async (orm) => expectOrmInsertsClean(await ormInserts(orm, ROWS, { step: STEPS[orm] }), ROWS),
    );
  },
);
