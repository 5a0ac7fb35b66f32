import {
  expectDatabaseStoppedHandled,
  expectLostCommitHandled,
  expectRowLockHandled,
  segmentDatabaseStopped,
  segmentLostCommitAck,
  segmentRowLockHeld,
} from './scenarios/segment-database-faults';
import {
  describeOnPrivateDatabase,
  describeScenarios,
  expectSegmentSafe,
} from './scenarios/scenario';

jest.setTimeout(300_000);

describeOnPrivateDatabase('system: the database stopped ~20 s under load (private MariaDB)', {
  'serves from buffers, answers typed 503s, recovers without a restart, never repeats an ID':
    async (server) => {
      const result = await segmentDatabaseStopped(server, 'full');
      expectSegmentSafe(result);
      expectDatabaseStoppedHandled(result);
    },
});

describeScenarios(['mysql'], 'system: lost COMMIT acknowledgements and a held row lock', {
  'never serves a range whose COMMIT answer was lost': async (db) => {
    const result = await segmentLostCommitAck(db, 'full');
    expectSegmentSafe(result);
    expectLostCommitHandled(result, 10);
  },
  'answers LEAF_ALLOCATION_LOCK_TIMEOUT past the lock wait, then recovers': async (db) => {
    const result = await segmentRowLockHeld(db, 'full');
    expectSegmentSafe(result);
    expectRowLockHandled(result);
  },
});
