import { describeScenarios } from './scenarios/scenario';
import { expectSustainedLoadClean, sustainedLoad } from './scenarios/sustained-load';

jest.setTimeout(300_000);

describeScenarios(['mysql', 'zookeeper'], 'system: sustained load (200 connections, 1 min)', {
  'segment mode: no error, no repeated ID, resident memory flat': async (db) =>
    expectSustainedLoadClean(await sustainedLoad('segment', db, 'full')),
  'snowflake mode: no error, no repeated ID, resident memory flat': async (db) =>
    expectSustainedLoadClean(await sustainedLoad('snowflake', db, 'full')),
});
