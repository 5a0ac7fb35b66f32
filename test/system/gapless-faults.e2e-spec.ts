import { describeOnPrivateDatabase } from './scenarios/scenario';
import { describeOnPrivatePostgres } from './scenarios/postgres-scenarios';
import { expectGaplessProof, gaplessFaultsScenario } from './scenarios/gapless-faults';

jest.setTimeout(240_000);

/** The CI size of gapless-faults.system-spec.ts: fewer clients, shorter load between faults. */
const CLAIM =
  'kill -9 of the lock holder, SIGSTOP, connections cut, database restarted: verify clean, every retry its first number';

describeOnPrivatePostgres('system (CI subset): gapless series under faults (private PostgreSQL)', {
  [CLAIM]: async (server) =>
    expectGaplessProof(await gaplessFaultsScenario('postgres', server, 'ci')),
});

describeOnPrivateDatabase('system (CI subset): gapless series under faults (private MariaDB)', {
  [CLAIM]: async (server) =>
    expectGaplessProof(await gaplessFaultsScenario('mariadb', server, 'ci')),
});
