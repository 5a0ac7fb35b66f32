import { databaseCoordination, expectCoordinationSafe } from './scenarios/database-coordination';
import { describeOnPrivatePostgres } from './scenarios/postgres-scenarios';

jest.setTimeout(180_000);

describeOnPrivatePostgres(
  'system (CI subset): every mode on PostgreSQL, no ZooKeeper, an instance killed every few seconds',
  {
    'no ID twice, no worker millisecond shared, sequence order kept': async (server) => {
      expectCoordinationSafe(await databaseCoordination(server, 'kill-cycle', 'ci'));
    },
  },
);
