/**
 * `max_id` lowered by hand under load, as after restoring an old backup: each instance
 * must refuse the ranges that are not above what it holds (and log it), never serve an ID
 * twice, and go on once `max_id` has passed its ranges. Each instance loads a tag of its
 * own, the case one instance can detect (docs/design.md, segment invariants); no high-water
 * mark (segment-only protection) and the trigger dropped.
 */
import { lowerMaxIdByHand } from '../harness/allocation-audit';
import { segmentRoute } from '../harness/load';
import { sleep } from '../../support/id-load';
import type { TestDatabase } from '../../support/test-database';
import {
  expectSegmentSafe,
  runSegmentScenario,
  SIZES,
  type ScenarioSize,
  type SegmentScenarioResult,
} from './scenario';

/** How far `max_id` is lowered, as in the issue. */
export const LOWERED_BY = 5_000n;

/** Result of {@link segmentMaxIdLowered}. */
export interface MaxIdLoweredResult extends SegmentScenarioResult {
  /** Per instance: the refusals (`LEAF_ALLOCATION_REGRESSED`) its log reports. */
  readonly refusalsLogged: Record<string, number>;
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
  const tagOf = (name: string): string => `sys-lower-${name}`;
  const names = Array.from({ length: SIZES[size].instances }, (_, i) => `p${i}`);
  const result = await runSegmentScenario({
    name: 'segment max_id lowered by 5,000',
    size,
    db,
    tags: names.map(tagOf),
    warmTags: (name) => [tagOf(name)],
    routes: (name) => [segmentRoute('get', tagOf(name)), segmentRoute('ids', tagOf(name), 20)],
    args: options.args,
    // Early, while the dynamic step is still small, so allocations follow the lowering.
    warmupMs: 2_000,
    fault: async ({ cluster, settings }) => {
      const tags = cluster.instances.map((i) => tagOf(i.name));
      // The database's refusal of a hand edit (GuardLeafAllocMaxId) would stop the fault.
      await db.query('DROP TRIGGER leaf_alloc_max_id_guard');
      const lowered = [];
      for (const tag of tags)
        lowered.push({ tag, ...(await lowerMaxIdByHand(db, tag, LOWERED_BY)) });
      // Until every tag has had two allocations since (the refused one and one above).
      await untilAllocatedSince(db, tags, 2, settings.loadMs + 15_000);
      return { lowered };
    },
  });
  const refusalsLogged = Object.fromEntries(
    Object.entries(result.output).map(([name, text]) => [
      name,
      text.split('LEAF_ALLOCATION_REGRESSED').length - 1,
    ]),
  );
  console.log(`[system] refusals logged: ${JSON.stringify(refusalsLogged)}`);
  return { ...result, refusalsLogged };
}

/**
 * Waits (at most `timeoutMs`) until every tag of `tags` has `count` allocations in the
 * audit after the last hand lowering.
 */
async function untilAllocatedSince(
  db: TestDatabase,
  tags: readonly string[],
  count: number,
  timeoutMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const rows = await db.query<{ biz_tag: string; n: number }>(
      `SELECT biz_tag, COUNT(*) AS n FROM leaf_alloc_audit
        WHERE new_max > old_max
          AND seq > (SELECT COALESCE(MAX(seq), 0) FROM leaf_alloc_audit WHERE note IS NOT NULL)
        GROUP BY biz_tag`,
    );
    if (tags.every((tag) => Number(rows.find((r) => r.biz_tag === tag)?.n ?? 0) >= count)) return;
    await sleep(200);
  }
}

/** The expectations of {@link segmentMaxIdLowered}, shared by the CI and the full spec. */
export function expectMaxIdLoweredSafe(result: MaxIdLoweredResult): void {
  // The fault happened (the database granted overlapping ranges)...
  expectSegmentSafe(result, { overlapsExpected: true });
  expect(result.segment.overlapCount).toBeGreaterThan(0);
  // ...and every instance alerted.
  for (const count of Object.values(result.refusalsLogged)) expect(count).toBeGreaterThan(0);
}
