import { expectHostileInputRefused, hostileInput } from './scenarios/hostile-input';
import { describeScenarios } from './scenarios/scenario';

jest.setTimeout(180_000);

describeScenarios(['mysql'], 'system (CI subset): hostile input', {
  'answers every malformed request with a 4xx in the JSON error contract and writes nothing':
    async (db) => expectHostileInputRefused(await hostileInput(db, 'ci')),
});
