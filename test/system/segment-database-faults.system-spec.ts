import { describeWhen, describeWithServices } from '../support/services';
import type { TestDatabase } from '../support/test-database';
import { MariaDbServer, mariaDbInstalled } from './harness/mariadb-server';
import {
  expectDatabaseStoppedHandled,
  expectLostCommitHandled,
  expectRowLockHandled,
  segmentDatabaseStopped,
  segmentLostCommitAck,
  segmentRowLockHeld,
} from './scenarios/segment-database-faults';
import { auditedTestDatabase, expectSegmentSafe } from './scenarios/scenario';

jest.setTimeout(300_000);

describeWhen(
  mariaDbInstalled(),
  'the MariaDB server package (mariadbd, mariadb-install-db): bash scripts/services.sh installs it',
  'system: the database stopped ~20 s under load (private MariaDB)',
  () => {
    let server: MariaDbServer;

    beforeAll(async () => {
      server = await MariaDbServer.start();
    });

    afterAll(async () => {
      await server?.dispose();
    });

    it('serves from buffers, answers typed 503s, recovers without a restart, never repeats an ID', async () => {
      const result = await segmentDatabaseStopped(server, 'full');
      expectSegmentSafe(result);
      expectDatabaseStoppedHandled(result);
    });
  },
);

describeWithServices(['mysql'], 'system: lost COMMIT acknowledgements and a held row lock', () => {
  let db: TestDatabase;

  beforeEach(async () => {
    db = await auditedTestDatabase();
  });

  afterEach(async () => {
    await db?.drop();
  });

  it('never serves a range whose COMMIT answer was lost', async () => {
    const result = await segmentLostCommitAck(db, 'full');
    expectSegmentSafe(result);
    expectLostCommitHandled(result, 10);
  });

  it('answers LEAF_ALLOCATION_LOCK_TIMEOUT past the lock wait, then recovers', async () => {
    const result = await segmentRowLockHeld(db, 'full');
    expectSegmentSafe(result);
    expectRowLockHandled(result);
  });
});
