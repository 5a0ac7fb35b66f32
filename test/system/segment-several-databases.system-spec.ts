import { describeOnPrivateServers } from './scenarios/scenario';
import {
  expectSeveralDatabasesHandled,
  segmentSeveralDatabases,
} from './scenarios/segment-several-databases';

jest.setTimeout(600_000);

describeOnPrivateServers(
  [],
  'system: three databases per tag, one killed for 30 s, one frozen for 30 s (private MariaDB servers)',
  {
    'serves every tag throughout, never repeats an ID': async () => {
      expectSeveralDatabasesHandled(await segmentSeveralDatabases('full', 30_000));
    },
  },
);
