import { describeScenarios } from './scenarios/scenario';
import { expectSustainedLoadClean, sustainedLoad } from './scenarios/sustained-load';

jest.setTimeout(180_000);

describeScenarios(['mysql', 'zookeeper'], 'system (CI subset): sustained load', {
  'segment mode: no error, no repeated ID, resident memory flat': async (db) =>
    expectSustainedLoadClean(await sustainedLoad('segment', db, 'ci')),
  'snowflake mode: no error, no repeated ID, resident memory flat': async (db) =>
    expectSustainedLoadClean(await sustainedLoad('snowflake', db, 'ci')),
});
