/**
 * `max_id` lowered by hand under load, as after restoring an old backup: each instance
 * must refuse the ranges that are not above what it holds (and log it), never serve an ID
 * twice, and go on once `max_id` has passed its ranges. Each instance loads a tag of its
 * own, the case one instance can detect (docs/design.md, segment invariants).
 */
import { lowerMaxIdByHand, readAllocationAudit } from '../harness/allocation-audit';
import { checkSegment } from '../harness/checker';
import { Cluster } from '../harness/cluster';
import { History } from '../harness/history';
import { Load, segmentRoute } from '../harness/load';
import { sleep } from '../../support/id-load';
import type { TestDatabase } from '../../support/test-database';
import { report, SIZES, type ScenarioReport, type ScenarioSize } from './scenario';

/** How far `max_id` is lowered, as in the issue. */
export const LOWERED_BY = 5_000n;

/** Result of {@link segmentMaxIdLowered}. */
export interface MaxIdLoweredResult extends ScenarioReport {
  readonly segment: ReturnType<typeof checkSegment>;
  /** Per instance: the refusals (`LEAF_ALLOCATION_REGRESSED`) its log reports. */
  readonly refusalsLogged: Record<string, number>;
  /** The lowerings made, per tag. */
  readonly lowered: Array<{ tag: string; from: bigint; to: bigint }>;
}

/**
 * Runs the scenario on `db` (migrated, audit installed). `args` overrides the node
 * arguments of the instances (to measure another build).
 */
export async function segmentMaxIdLowered(
  db: TestDatabase,
  size: ScenarioSize,
  options: { args?: readonly string[] } = {},
): Promise<MaxIdLoweredResult> {
  const settings = SIZES[size];
  const tagOf = (name: string): string => `sys-lower-${name}`;
  const startedAt = Date.now();
  const cluster = Cluster.create({
    size: settings.instances,
    env: (name) => ({
      LEAF_DB_URL: db.url,
      LEAF_SNOWFLAKE_ENABLED: 'false',
      LEAF_SEGMENT_WARM_TAGS: tagOf(name),
    }),
    args: options.args,
  });
  for (const instance of cluster.instances) {
    await db.query('INSERT INTO leaf_alloc (biz_tag, max_id, step) VALUES (?, 1, 1000)', [
      tagOf(instance.name),
    ]);
  }
  const history = new History();
  try {
    await Promise.all(cluster.instances.map((instance) => instance.start()));
    const loads = cluster.instances.map((instance) =>
      Load.start({
        targets: [instance],
        routes: [
          segmentRoute('get', tagOf(instance.name)),
          segmentRoute('ids', tagOf(instance.name), 20),
        ],
        history,
        concurrency: Math.max(2, Math.floor(settings.concurrency / settings.instances)),
        durationMs: settings.loadMs + 20_000,
      }),
    );
    // Early enough that the dynamic step is still small, so allocations follow the lowering.
    await untilRanges(
      db,
      cluster.instances.map((i) => tagOf(i.name)),
      4,
      settings.loadMs,
    );
    const lowered = [];
    for (const instance of cluster.instances) {
      const tag = tagOf(instance.name);
      lowered.push({ tag, ...(await lowerMaxIdByHand(db, tag, LOWERED_BY)) });
    }
    // Until every tag has had two allocations since (the refused one and one above).
    await untilRanges(
      db,
      lowered.map((l) => l.tag),
      2,
      settings.loadMs + 15_000,
      lowered,
    );
    await sleep(settings.loadMs / 4);
    await Promise.all(loads.map((load) => load.stop()));
    await Promise.all(cluster.instances.map((instance) => instance.stop()));
    const audit = await readAllocationAudit(db);
    const segment = checkSegment(history, audit.ranges);
    const refusalsLogged = Object.fromEntries(
      cluster.instances.map((i) => [
        i.name,
        i.output.split('LEAF_ALLOCATION_REGRESSED').length - 1,
      ]),
    );
    const base = report('segment max_id lowered by 5,000', size, startedAt, history, {
      lowered,
      refusalsLogged,
      lowerings: audit.lowerings.length,
      overlappingRanges: segment.overlapCount,
      idsInOverlap: segment.idsInOverlap,
      outsideRanges: segment.outside.count,
      notIncreasing: segment.notIncreasing.count,
    });
    return { ...base, segment, refusalsLogged, lowered };
  } finally {
    await cluster.dispose();
  }
}

/**
 * Waits (at most `timeoutMs`) until every tag of `tags` has `count` allocations in the
 * audit (after its lowering, when `after` gives them).
 */
async function untilRanges(
  db: TestDatabase,
  tags: readonly string[],
  count: number,
  timeoutMs: number,
  after: ReadonlyArray<{ tag: string; to: bigint }> = [],
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const rows = await db.query<{ biz_tag: string; n: number }>(
      `SELECT biz_tag, COUNT(*) AS n FROM leaf_alloc_audit
        WHERE new_max > old_max AND seq > ? GROUP BY biz_tag`,
      [after.length > 0 ? await loweringSeq(db) : 0],
    );
    const done = tags.every((tag) => Number(rows.find((r) => r.biz_tag === tag)?.n ?? 0) >= count);
    if (done) return;
    await sleep(200);
  }
}

/** The audit sequence of the last hand lowering. */
async function loweringSeq(db: TestDatabase): Promise<number> {
  const [row] = await db.query<{ seq: string | null }>(
    'SELECT CAST(MAX(seq) AS CHAR) AS seq FROM leaf_alloc_audit WHERE note IS NOT NULL',
  );
  return Number(row?.seq ?? 0);
}

/** The expectations of {@link segmentMaxIdLowered}, shared by the CI and the full spec. */
export function expectMaxIdLoweredSafe(result: MaxIdLoweredResult): void {
  expect(result.unique.duplicates).toEqual([]);
  expect(result.unique.valid).toBe(true);
  expect(result.segment.outside.count).toBe(0);
  expect(result.segment.notIncreasing.count).toBe(0);
  // The fault happened (the database granted overlapping ranges) and every instance alerted.
  expect(result.segment.overlapCount).toBeGreaterThan(0);
  for (const count of Object.values(result.refusalsLogged)) expect(count).toBeGreaterThan(0);
  // It went on serving after the refusal.
  expect(result.unique.ids).toBeGreaterThan(1000);
}
