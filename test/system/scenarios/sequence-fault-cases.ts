/**
 * The checks of each fault of docs/reliability.md "Sequence mode under the faults of a real
 * cluster", shared by the full matrix (`*.system-spec.ts`) and the CI subset.
 */
import type { TestDatabase } from '../../support/test-database';
import type { ScenarioSize } from './scenario';
import {
  ROW_LOCK_HOLD_MS,
  sequenceClusterScenario,
  type SequenceClusterFault,
  type SequenceClusterResult,
  WIPE_SESSION_MS,
} from './sequence-faults';
import { expectSequenceSafe, SEQUENCE_TEST_SESSION_MS } from './sequence-order';

type Case = (db: TestDatabase) => Promise<void>;

/** Every case, by title, at `size`. */
export function sequenceClusterCases(size: ScenarioSize): Record<string, Case> {
  /** The case of `fault`: a run, the safety claims, then `check` of its figures. */
  const at =
    (check: (result: SequenceClusterResult) => void, fault: SequenceClusterFault): Case =>
    async (db) => {
      const result = await sequenceClusterScenario(db, fault, size);
      expectSequenceSafe(result);
      check(result);
    };
  return {
    'a leaf_alloc restored from a dump, then the issuer killed: the mark (on the election’s ZooKeeper by default) repairs it':
      at((result) => {
        expect(Object.values(result.logs).join('\n')).toContain('[LEAF_MAX_ID_REGRESSION]');
      }, 'restore'),
    'a leaf_alloc restored with the mark off: the issuer’s guard refuses the range (typed 503s), nothing re-served':
      at((result) => {
        expect(Object.values(result.logs).join('\n')).toContain('[LEAF_ALLOCATION_REGRESSED]');
      }, 'restore-unmarked'),
    'ZooKeeper lost its data and a fresh instance joined: order kept, every instance serves again without a restart':
      at((result) => {
        // Every instance, the fresh one included, serves again within a session timeout of
        // the elected instance's new session opening (a fresh process: its start), plus a round.
        const again = result.facts.servingAgainMs as Record<string, number>;
        expect(Object.keys(again).sort()).toEqual(['p0', 'p1', 'p2', 'p3']);
        for (const ms of Object.values(again)) {
          expect(ms).toBeLessThan(WIPE_SESSION_MS + 5000);
        }
      }, 'zookeeper-wipe'),
    'the issuer cut from the database: it hands its group over, the others keep serving': at(
      (result) => {
        expect(result.logs[result.faulted!]).toContain('handed over: its allocations have failed');
        expect(result.survivorsLongestGapMs).toBeLessThan(SEQUENCE_TEST_SESSION_MS + 2000);
      },
      'database-cut',
    ),
    'the issuer cut from the other instances over HTTP: their readiness goes 503, and 200 once healed':
      at((result) => {
        expect(result.facts.othersNotReadyAfterMs).toBeLessThan(5000);
        expect(result.facts.issuerReadyDuringCut).toBe(true);
        expect(result.facts.othersReadyAgainAfterMs).toBeLessThan(5000);
      }, 'http-cut'),
    'HOST=127.0.0.1 and no LEAF_SEQUENCE_ADVERTISE: every instance serves every call': at(
      (result) => {
        expect(Object.keys(result.availability.byProcess).sort()).toEqual(['p0', 'p1', 'p2']);
        expect(result.availability.fail).toBe(0);
      },
      'host-default',
    ),
    'the issuer went silent holding the row lock: the database drops the session, and the group’s issuer allocates again':
      at((result) => {
        // Every instance waits for the same lock (the group may come back to the silent
        // one): the session timeout, the hold bound and a hand-over, not the rest of the run.
        expect(Math.max(...Object.values(result.longestGapMsByInstance))).toBeLessThan(
          SEQUENCE_TEST_SESSION_MS + ROW_LOCK_HOLD_MS + 3000,
        );
      }, 'row-lock'),
    'four groups, the first instance alone at first: spread 2/1/1 once the others join, order kept on every key':
      at((result) => {
        expect(result.facts.issuingBeforeOthers).toEqual({ p0: [0, 1, 2, 3] });
        const sizes = Object.values(result.facts.issuingAtEnd as Record<string, number[]>).map(
          (groups) => groups.length,
        );
        expect(sizes.sort()).toEqual([1, 1, 2]);
      }, 'spread'),
  };
}
