import { describeScenarios } from './scenarios/scenario';
import { sequenceClusterCases } from './scenarios/sequence-fault-cases';

jest.setTimeout(120_000);

/** The CI subset of issue 25's faults (the full set: sequence-faults.system-spec.ts). */
const cases = sequenceClusterCases('ci');
const subset = Object.fromEntries(
  Object.entries(cases).filter(([title]) => /over HTTP|HOST=127\.0\.0\.1/.test(title)),
);

describeScenarios(
  ['mysql', 'zookeeper'],
  'system (CI subset): sequence mode, readiness and the default address',
  subset,
);
