/**
 * kill -9 of instances under load, then restart: the killed instance's unused ranges are
 * abandoned (gaps), the restarted one takes new ranges, and no ID repeats.
 */
import { installAllocationAudit, readAllocationAudit } from '../harness/allocation-audit';
import { checkSegment, idsOutside } from '../harness/checker';
import { Cluster } from '../harness/cluster';
import { History } from '../harness/history';
import { Load, segmentRoute } from '../harness/load';
import { sleep } from '../../support/id-load';
import type { TestDatabase } from '../../support/test-database';
import { report, SIZES, type ScenarioReport, type ScenarioSize } from './scenario';

/** Result of {@link segmentKillRestart}, for the spec's assertions. */
export interface KillRestartResult extends ScenarioReport {
  readonly segment: ReturnType<typeof checkSegment>;
  /** IDs the restarted instances issued after their restart outside ranges committed after it. */
  readonly reusedAfterRestart: bigint[];
}

/**
 * Runs the scenario on `db` (migrated, audit not yet installed): instances load one tag
 * (step 1000: many allocations), `p1` is killed at a third of the load and `p0` at two
 * thirds, each restarted a second later.
 */
export async function segmentKillRestart(
  db: TestDatabase,
  size: ScenarioSize,
): Promise<KillRestartResult> {
  const settings = SIZES[size];
  const tag = 'sys-kill';
  await installAllocationAudit(db);
  await db.query('INSERT INTO leaf_alloc (biz_tag, max_id, step) VALUES (?, 1, 1000)', [tag]);
  const startedAt = Date.now();
  const cluster = await Cluster.start({
    size: settings.instances,
    env: () => ({
      LEAF_DB_URL: db.url,
      LEAF_SNOWFLAKE_ENABLED: 'false',
      LEAF_SEGMENT_WARM_TAGS: tag,
    }),
  });
  const history = new History();
  try {
    const load = Load.start({
      targets: cluster.instances,
      routes: [
        segmentRoute('get', tag),
        segmentRoute('ids', tag, 50),
        segmentRoute('range', tag, 20),
      ],
      history,
      concurrency: settings.concurrency,
      durationMs: settings.loadMs + 20_000,
    });
    const restarts: Array<{ name: string; at: number; seqBefore: number }> = [];
    for (const name of ['p1', 'p0']) {
      await sleep(settings.loadMs / 3);
      const instance = cluster.get(name);
      await instance.kill();
      // Every range committed so far may have been held by the dead process.
      const seqBefore = await maxAuditSeq(db);
      await sleep(1_000);
      await instance.start();
      restarts.push({ name, at: Date.now(), seqBefore });
    }
    await sleep(settings.loadMs / 3);
    await load.stop();
    await Promise.all(cluster.instances.map((instance) => instance.stop()));
    const audit = await readAllocationAudit(db);
    const segment = checkSegment(history, audit.ranges);
    const reusedAfterRestart = restarts.flatMap(({ name, at, seqBefore }) =>
      idsOutside(
        history.filter((o) => o.process === name && o.type === 'ok' && o.invokeMs >= at),
        audit.ranges.filter((r) => r.seq > seqBefore),
      ),
    );
    const base = report('segment kill -9 + restart', size, startedAt, history, {
      ranges: audit.ranges.length,
      handBacks: audit.handBacks,
      outsideRanges: segment.outside.count,
      overlaps: segment.overlapCount,
      notIncreasing: segment.notIncreasing.count,
      reusedAfterRestart: reusedAfterRestart.length,
    });
    return { ...base, segment, reusedAfterRestart };
  } finally {
    await cluster.dispose();
  }
}

async function maxAuditSeq(db: TestDatabase): Promise<number> {
  const [row] = await db.query<{ seq: string | null }>(
    'SELECT CAST(MAX(seq) AS CHAR) AS seq FROM leaf_alloc_audit',
  );
  return Number(row?.seq ?? 0);
}

/** The expectations of {@link segmentKillRestart}, shared by the CI and the full spec. */
export function expectKillRestartSafe(result: KillRestartResult): void {
  expect(result.unique.duplicates).toEqual([]);
  expect(result.unique.valid).toBe(true);
  expect(result.segment.outside.count).toBe(0);
  expect(result.segment.overlapCount).toBe(0);
  expect(result.segment.notIncreasing.count).toBe(0);
  expect(result.reusedAfterRestart).toEqual([]);
  expect(result.unique.ids).toBeGreaterThan(1000);
}
