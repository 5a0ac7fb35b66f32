import {
  databaseCoordination,
  expectCoordinationSafe,
  type CoordinationFault,
} from './scenarios/database-coordination';
import { describeOnPrivatePostgres } from './scenarios/postgres-scenarios';

jest.setTimeout(240_000);

const FAULTS: CoordinationFault[] = [
  'kill-cycle',
  'pause',
  'cut',
  'stall',
  'restart',
  'clock-step',
];

describeOnPrivatePostgres(
  'system: every mode on PostgreSQL, no ZooKeeper, three instances, one fault per run',
  Object.fromEntries(
    FAULTS.map((fault) => [
      `${fault}: no ID twice, no worker millisecond shared, sequence order kept`,
      async (server) => expectCoordinationSafe(await databaseCoordination(server, fault, 'full')),
    ]),
  ),
);
