import { describeScenarios } from './scenarios/scenario';
import { expectSequenceSafe, sequenceScenario } from './scenarios/sequence-order';

jest.setTimeout(120_000);

describeScenarios(
  ['mysql', 'zookeeper'],
  'system (CI subset): sequence mode, three instances, one key',
  {
    'every call that began after another ended got a larger ID, through every instance': async (
      db,
    ) => {
      const result = await sequenceScenario(db, 'none');
      expectSequenceSafe(result);
      // Calls through all three instances, forwarded ones included.
      expect(Object.keys(result.availability.byProcess).sort()).toEqual(['p0', 'p1', 'p2']);
      expect(result.availability.fail).toBe(0);
    },
    'the issuer killed (-9): the successor issues above it, after about the session timeout':
      async (db) => {
        const result = await sequenceScenario(db, 'kill');
        expectSequenceSafe(result);
        expect(result.facts.successor).not.toBe(result.faulted);
      },
  },
);
