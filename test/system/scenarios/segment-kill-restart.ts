/**
 * kill -9 of instances under load, then restart: the killed instance's unused ranges are
 * abandoned (gaps), the restarted one takes new ranges, and no ID repeats.
 */
import { idsOutside } from '../harness/checker';
import { segmentRoute } from '../harness/load';
import { sleep } from '../../support/id-load';
import type { TestDatabase } from '../../support/test-database';
import {
  expectSegmentSafe,
  runSegmentScenario,
  type ScenarioSize,
  type SegmentScenarioResult,
} from './scenario';

/** Result of {@link segmentKillRestart}. */
export interface KillRestartResult extends SegmentScenarioResult {
  /** IDs the restarted instances issued after their restart outside ranges committed after it. */
  readonly reusedAfterRestart: bigint[];
}

/**
 * Runs the scenario on `db` (migrated, audit installed): instances load one tag (step 1000:
 * many allocations); `p1` is killed, then `p0`, each restarted a second later.
 */
export async function segmentKillRestart(
  db: TestDatabase,
  size: ScenarioSize,
): Promise<KillRestartResult> {
  const tag = 'sys-kill';
  const restarts: Array<{ name: string; at: number; seqBefore: number }> = [];
  const result = await runSegmentScenario({
    name: 'segment kill -9 + restart',
    size,
    db,
    tags: [tag],
    routes: () => [
      segmentRoute('get', tag),
      segmentRoute('ids', tag, 50),
      segmentRoute('range', tag, 20),
    ],
    fault: async ({ cluster, settings }) => {
      for (const name of ['p1', 'p0']) {
        const instance = cluster.get(name);
        await instance.kill();
        // Every range committed so far may have been held by the dead process.
        const seqBefore = await maxAuditSeq(db);
        await sleep(1_000);
        await instance.start();
        restarts.push({ name, at: Date.now(), seqBefore });
        await sleep(settings.loadMs / 3);
      }
      return { killed: restarts.map((r) => r.name) };
    },
  });
  const reusedAfterRestart = restarts.flatMap(({ name, at, seqBefore }) =>
    idsOutside(
      result.history.filter((o) => o.process === name && o.type === 'ok' && o.invokeMs >= at),
      result.audit.ranges.filter((r) => r.seq > seqBefore),
    ),
  );
  return { ...result, reusedAfterRestart };
}

async function maxAuditSeq(db: TestDatabase): Promise<number> {
  const [row] = await db.query<{ seq: string | null }>(
    'SELECT CAST(MAX(seq) AS CHAR) AS seq FROM leaf_alloc_audit',
  );
  return Number(row?.seq ?? 0);
}

/** The expectations of {@link segmentKillRestart}, shared by the CI and the full spec. */
export function expectKillRestartSafe(result: KillRestartResult): void {
  expectSegmentSafe(result);
  expect(result.reusedAfterRestart).toEqual([]);
}
