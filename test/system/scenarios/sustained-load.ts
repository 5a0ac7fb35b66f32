/**
 * Sustained load: many concurrent keep-alive connections on one instance of each mode for
 * a while; no errors, no repeated ID, and resident memory flat after the warm-up.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { sleep } from '../../support/id-load';
import type { TestDatabase } from '../../support/test-database';
import { connectZookeeperAdmin, deleteTree } from '../../support/zookeeper';
import { zookeeperConnectString } from '../../support/services';
import { readAllocationAudit } from '../harness/allocation-audit';
import { checkSegment, type SegmentResult } from '../harness/checker';
import { Cluster } from '../harness/cluster';
import { History } from '../harness/history';
import { Load, segmentRoute, snowflakeRoute } from '../harness/load';
import { report, type ScenarioReport, type ScenarioSize } from './scenario';

/** Connections and duration of each size. */
const SUSTAINED: Record<ScenarioSize, { connections: number; durationMs: number }> = {
  ci: { connections: 100, durationMs: 8_000 },
  full: { connections: 200, durationMs: 60_000 },
};

/** Resident memory of the instance over the run, MB. */
export interface RssTrace {
  /** One sample a second. */
  readonly samples: number[];
  /** Median of the second quarter (after the warm-up). */
  readonly afterWarmUp: number;
  /** Median of the last quarter. */
  readonly atEnd: number;
}

/** Result of {@link sustainedLoad}. */
export interface SustainedLoadResult extends ScenarioReport {
  readonly mode: 'segment' | 'snowflake';
  readonly connections: number;
  readonly rss: RssTrace;
  /** Successful operations per second over the run. */
  readonly opsPerSecond: number;
  readonly segment: SegmentResult | null;
}

function rssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0) / 1024;
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length === 0 ? 0 : sorted[Math.floor(sorted.length / 2)]!;
}

/**
 * One instance of `mode` (segment on `db`; snowflake on the shared ZooKeeper under a
 * namespace of its own), loaded by the size's connections for its duration.
 */
export async function sustainedLoad(
  mode: 'segment' | 'snowflake',
  db: TestDatabase,
  size: ScenarioSize,
): Promise<SustainedLoadResult> {
  const { connections, durationMs } = SUSTAINED[size];
  const tag = 'sys-sustained';
  const name = `sys-${randomBytes(4).toString('hex')}`;
  if (mode === 'segment') {
    await db.query('INSERT INTO leaf_alloc (biz_tag, max_id, step) VALUES (?, 1, 1000)', [tag]);
  }
  const startedAt = Date.now();
  const cluster = await Cluster.start({
    size: 1,
    env: (): Record<string, string> =>
      mode === 'segment'
        ? { LEAF_DB_URL: db.url, LEAF_SNOWFLAKE_ENABLED: 'false', LEAF_SEGMENT_WARM_TAGS: tag }
        : {
            LEAF_SEGMENT_ENABLED: 'false',
            LEAF_NAME: name,
            LEAF_ZK_ADDRESS: zookeeperConnectString(),
            LEAF_SNOWFLAKE_ADVERTISE: '127.0.0.1:18400',
          },
  });
  const history = new History();
  try {
    const instance = cluster.get('p0');
    const pid = instance.pid!;
    const load = Load.start({
      targets: [instance],
      routes:
        mode === 'segment'
          ? [segmentRoute('get', tag), segmentRoute('ids', tag, 10)]
          : [snowflakeRoute('get'), snowflakeRoute('ids', 'k', 10)],
      history,
      concurrency: connections,
      durationMs,
      timeoutMs: 10_000,
    });
    const samples: number[] = [];
    while (Date.now() - startedAt < durationMs + 60_000) {
      samples.push(rssMb(pid));
      const done = await Promise.race([
        load.finished.then(() => true),
        sleep(1_000).then(() => false),
      ]);
      if (done) break;
    }
    const summary = await load.finished;
    await instance.stop();
    const segment =
      mode === 'segment' ? checkSegment(history, (await readAllocationAudit(db)).ranges) : null;
    const quarter = Math.max(1, Math.floor(samples.length / 4));
    const rss = {
      samples: samples.map((s) => Math.round(s)),
      afterWarmUp: Math.round(median(samples.slice(quarter, 2 * quarter))),
      atEnd: Math.round(median(samples.slice(-quarter))),
    };
    const opsPerSecond = Math.round((summary.ok * 1000) / summary.durationMs);
    const base = report(`sustained load, ${mode}`, size, startedAt, history, {
      connections,
      opsPerSecond,
      rssAfterWarmUpMb: rss.afterWarmUp,
      rssAtEndMb: rss.atEnd,
      rssPeakMb: Math.round(Math.max(...samples)),
    });
    return { ...base, mode, connections, rss, opsPerSecond, segment };
  } finally {
    await cluster.dispose();
    if (mode === 'snowflake') {
      const admin = await connectZookeeperAdmin();
      try {
        await deleteTree(admin, `/snowflake/${name}`);
      } finally {
        await admin.close();
      }
    }
  }
}

/** The expectations of {@link sustainedLoad}. */
export function expectSustainedLoadClean(result: SustainedLoadResult): void {
  expect(result.availability.errors).toEqual({});
  expect(result.availability.fail + result.availability.info).toBe(0);
  expect(result.unique.duplicates).toEqual([]);
  expect(result.unique.valid).toBe(true);
  if (result.segment) {
    expect(result.segment.outside.sample).toEqual([]);
    expect(result.segment.overlaps).toEqual([]);
    expect(result.segment.notIncreasing.sample).toEqual([]);
  }
  // Flat: the end within 50 % (+32 MB for a loaded machine's GC timing) of after the warm-up.
  expect(result.rss.atEnd).toBeLessThanOrEqual(result.rss.afterWarmUp * 1.5 + 32);
  expect(result.unique.ids).toBeGreaterThan(1000);
}
