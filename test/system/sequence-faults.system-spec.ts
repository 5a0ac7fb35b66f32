import type { ScenarioSize } from './scenarios/scenario';
import { describeOnPrivateDatabase, describeScenarios } from './scenarios/scenario';
import { expectSequenceSafe, sequenceScenario } from './scenarios/sequence-order';
import { sequenceClusterCases } from './scenarios/sequence-fault-cases';

jest.setTimeout(300_000);

/** `LEAF_SYSTEM_SIZE=ci` runs the shorter load (same faults). */
const size: ScenarioSize = process.env.LEAF_SYSTEM_SIZE === 'ci' ? 'ci' : 'full';

describeScenarios(['mysql', 'zookeeper'], 'system: sequence mode, the issuer under faults', {
  'no load (baseline)': async (db) => expectSequenceSafe(await sequenceScenario(db, 'none', size)),
  'the issuer killed (-9)': async (db) =>
    expectSequenceSafe(await sequenceScenario(db, 'kill', size)),
  'the issuer paused (SIGSTOP) past its session': async (db) =>
    expectSequenceSafe(await sequenceScenario(db, 'pause', size)),
  'the issuer cut off from ZooKeeper (TCP proxy) past its session': async (db) =>
    expectSequenceSafe(await sequenceScenario(db, 'partition', size)),
  'the issuer restarted gracefully (SIGTERM, start)': async (db) =>
    expectSequenceSafe(await sequenceScenario(db, 'restart', size)),
});

describeOnPrivateDatabase('system: sequence mode, the database stopped', {
  'the issuer serves its buffered range, then typed 503s, and recovers in order': async (server) =>
    expectSequenceSafe(await sequenceScenario(server.database, 'database', size, server)),
});

describeScenarios(
  ['mysql', 'zookeeper'],
  'system: sequence mode under the faults of a real cluster (issue 25)',
  sequenceClusterCases(size),
);
