import { describeOnPrivateDatabase, expectSegmentSafe } from './scenarios/scenario';
import {
  expectDatabaseStoppedHandled,
  segmentDatabaseStopped,
} from './scenarios/segment-database-faults';

jest.setTimeout(180_000);

describeOnPrivateDatabase('system (CI subset): the database stopped 8 s under load', {
  'serves from buffers, answers typed 503s, recovers without a restart, never repeats an ID':
    async (server) => {
      const result = await segmentDatabaseStopped(server, 'ci', 8_000);
      expectSegmentSafe(result);
      expectDatabaseStoppedHandled(result);
    },
});
