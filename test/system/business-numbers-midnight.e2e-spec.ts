/**
 * CI subset of test/system/business-numbers-midnight.system-spec.ts: the same scenario, about
 * 25 s of load around a midnight of the database's clock (scenarios/business-numbers-midnight.ts).
 */
import { faketimeAvailable } from '../support/faketime';
import { describeWhen } from '../support/services';
import { postgresInstalled } from './harness/postgres-server';
import { expectMidnightSafe, midnightScenario } from './scenarios/business-numbers-midnight';

jest.setTimeout(180_000);

describeWhen(
  postgresInstalled() && faketimeAvailable(),
  'PostgreSQL server binaries and libfaketime',
  'system (CI): business numbers across a midnight of the database clock',
  () => {
    it('three instances, kill -9 and restarts on both sides of midnight: unique, one restart per day, in order', async () => {
      expectMidnightSafe(await midnightScenario('ci'));
    });
  },
);
