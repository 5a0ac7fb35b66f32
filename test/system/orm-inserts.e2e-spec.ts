import { describeWithServices } from '../support/services';
import { expectOrmInsertsClean, ormInserts } from './scenarios/orm-inserts';

jest.setTimeout(240_000);

const ROWS = 5_000;

describeWithServices(
  ['postgres'],
  `system (CI subset): three processes × ${ROWS.toLocaleString('en')} inserts through each ORM on PostgreSQL`,
  () => {
    it.each(['typeorm', 'drizzle'] as const)(
      '%s: 0 primary-key violations, every ID valid',
      async (orm) => expectOrmInsertsClean(await ormInserts(orm, ROWS, { step: 500 }), ROWS),
    );
  },
);
