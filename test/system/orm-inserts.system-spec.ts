import { describeWithServices } from '../support/services';
import { expectOrmInsertsClean, ormInserts } from './scenarios/orm-inserts';

jest.setTimeout(1_200_000);

const ROWS = 100_000;

describeWithServices(
  ['postgres'],
  `system: three processes × ${ROWS.toLocaleString('en')} inserts through each ORM on PostgreSQL`,
  () => {
    it.each(['typeorm', 'drizzle', 'mikro-orm', 'prisma'] as const)(
      '%s: 0 primary-key violations, every ID valid',
      async (orm) => {
        const result = await ormInserts(orm, ROWS);
        console.log(
          `[orm-inserts] ${orm}: ${result.rows} rows, ${result.distinct} distinct IDs, ${result.invalid.length} invalid, ` +
            `${result.workers.map((worker) => worker.ms).join('/')} ms per process`,
        );
        expectOrmInsertsClean(result, ROWS);
      },
    );
  },
);
