import { describeOnPrivateServers } from './scenarios/scenario';
import {
  expectSeveralDatabasesHandled,
  segmentSeveralDatabases,
} from './scenarios/segment-several-databases';

jest.setTimeout(180_000);

describeOnPrivateServers(
  [],
  'system (CI subset): three databases per tag, one killed 5 s, one frozen 5 s',
  {
    'serves every tag throughout, never repeats an ID': async () => {
      expectSeveralDatabasesHandled(await segmentSeveralDatabases('ci', 5_000));
    },
  },
);
