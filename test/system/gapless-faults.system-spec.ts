import { describeOnPrivateDatabase } from './scenarios/scenario';
import { describeOnPrivatePostgres } from './scenarios/postgres-scenarios';
import { expectGaplessProof, gaplessFaultsScenario } from './scenarios/gapless-faults';

jest.setTimeout(300_000);

const CLAIM =
  'three instances by environment: kill -9 of the lock holder, SIGSTOP past lock wait and TTL, connections cut, database restarted, retries elsewhere — verify: 0 missing, 0 duplicates, every retry its first number, chain intact, all settled within TTL + sweep + lock wait';

describeOnPrivatePostgres('system: gapless series under faults (private PostgreSQL)', {
  [CLAIM]: async (server) =>
    expectGaplessProof(await gaplessFaultsScenario('postgres', server, 'full')),
});

describeOnPrivateDatabase('system: gapless series under faults (private MariaDB)', {
  [CLAIM]: async (server) =>
    expectGaplessProof(await gaplessFaultsScenario('mariadb', server, 'full')),
});
