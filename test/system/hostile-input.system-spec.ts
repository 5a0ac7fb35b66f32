import { expectHostileInputRefused, hostileInput } from './scenarios/hostile-input';
import { describeScenarios } from './scenarios/scenario';

jest.setTimeout(300_000);

describeScenarios(['mysql'], 'system: hostile input', {
  'answers every malformed request with a 4xx in the JSON error contract and writes nothing':
    async (db) => expectHostileInputRefused(await hostileInput(db, 'full')),
});
