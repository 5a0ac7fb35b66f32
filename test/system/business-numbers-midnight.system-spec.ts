/**
 * Business numbers across a midnight of the database's clock, the full run (about 85 s of
 * load, six kills): scenarios/business-numbers-midnight.ts. Not in `npm test` (its budget);
 * `npm run test:system -- --testPathPatterns business-numbers-midnight`.
 */
import { faketimeAvailable } from '../support/faketime';
import { describeWhen } from '../support/services';
import { postgresInstalled } from './harness/postgres-server';
import { expectMidnightSafe, midnightScenario } from './scenarios/business-numbers-midnight';

jest.setTimeout(300_000);

describeWhen(
  postgresInstalled() && faketimeAvailable(),
  'PostgreSQL server binaries and libfaketime',
  'system: business numbers across a midnight of the database clock',
  () => {
    it('three instances, six kill -9 and restarts around midnight: unique, one restart per day, in order', async () => {
      expectMidnightSafe(await midnightScenario('full'));
    });
  },
);
