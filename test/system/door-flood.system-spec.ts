/**
 * Per-key state is bounded (docs/security.md, "At the door"): 100,000 distinct keys nobody
 * created (`LEAF_FLOOD_KEYS`), over HTTP, against the built app started as a process (segment,
 * sequence, business numbers and snowflake on MariaDB), with `/metrics` scraped every 2 s
 * meanwhile as Prometheus would, after a warm-up of the same load over 50 keys. Then: `/metrics` ≤ 2 MB and names none of the keys, the
 * process's RSS grew by ≤ 64 MB, readiness answered 200 at every poll and every snowflake
 * time-lease extension succeeded (no `error` or `degraded` outcome). The CI subset is
 * test/door-flood.e2e-spec.ts.
 */
import { readFileSync } from 'node:fs';
import { AppProcess, buildIsFresh, killAllAppProcesses } from '../support/app-process';
import { tempDir } from '../support/app';
import { HttpClient, runBounded } from '../support/http-client';
import { describeWithServices } from '../support/services';
import { createTestDatabase, type TestDatabase } from '../support/test-database';
import { sparePort } from './harness/mariadb-server';
import { UNKNOWN_KEY_ROUTES } from '../support/bad-input';

jest.setTimeout(1_800_000);

const KEYS = Number(process.env.LEAF_FLOOD_KEYS ?? 100_000);
const MAX_METRICS_BYTES = 2_000_000;
const MAX_RSS_GROWTH_MB = 64;
/** Requests of the warm-up, over 50 keys (`LEAF_FLOOD_WARM`). */
const WARM_REQUESTS = Number(process.env.LEAF_FLOOD_WARM ?? 20_000);

/** Resident set size of `pid` in MB (Linux). */
function rssMb(pid: number): number {
  const match = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Number(match[1]) / 1024 : NaN;
}

/** The value of one metric line (`name{labels} value`) summed over the lines that match. */
function metricSum(body: string, pattern: RegExp): number {
  return body
    .split('\n')
    .filter((line) => pattern.test(line))
    .reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(' ') + 1)), 0);
}

describeWithServices(['mysql'], 'system: 100,000 unknown keys over HTTP', () => {
  let db: TestDatabase;
  let state: ReturnType<typeof tempDir>;
  let app: AppProcess;
  let http: HttpClient;

  beforeAll(async () => {
    if (!buildIsFresh()) throw new Error('run `npm run build` first: this spec starts dist/');
    db = await createTestDatabase({ migrate: true });
    await db.query("INSERT INTO leaf_alloc (biz_tag, max_id, step) VALUES ('known', 1, 1000)");
    state = tempDir('leaf-flood-system');
    const port = await sparePort();
    app = AppProcess.spawn(
      {
        LEAF_DB_URL: db.url,
        LEAF_STATE_DIR: state.path,
        LEAF_WORKER_ID: '7',
        LEAF_NAME: `flood${Date.now().toString(36)}`,
        PORT: String(port),
        HOST: '127.0.0.1',
        LEAF_SEQUENCE_ENABLED: 'true',
        LEAF_SEQUENCE_ADVERTISE: `http://127.0.0.1:${port}`,
        LEAF_SEQUENCE_GROUPS: '1',
      },
      { timeoutMs: 1_700_000 },
    );
    await app.listening();
    http = new HttpClient(`http://127.0.0.1:${port}`, 48);
  });

  afterAll(async () => {
    http?.close();
    await app?.stop();
    await killAllAppProcesses();
    await db?.drop();
    state?.remove();
  });

  it('keeps /metrics, memory and the snowflake lease within their bounds', async () => {
    // Warm: the known tag on both modes, snowflake, a scrape.
    for (const path of [
      '/api/segment/get/known',
      '/api/sequence/get/known',
      '/api/snowflake/get/k',
    ]) {
      expect((await http.send(path)).status).toBe(200);
    }
    // The same load with 50 keys over and over first: the heap grows to what the request rate
    // needs (young generation, buffers), so the growth measured next is what distinct keys add.
    await runBounded(WARM_REQUESTS, 32, (i) =>
      http.send(
        UNKNOWN_KEY_ROUTES[i % UNKNOWN_KEY_ROUTES.length]!(`warm-${(i % 50).toString(36)}`),
      ),
    );
    const heapBefore = metricSum(
      (await http.send('/metrics')).body,
      /^nodejs_heap_size_used_bytes /,
    );
    const rssBefore = rssMb(app.pid);
    const startedAt = Date.now();

    let flooding = true;
    const readiness: number[] = [];
    const scrapes: number[] = [];
    const watch = (async () => {
      for (let tick = 0; flooding; tick++) {
        readiness.push((await http.send('/health/ready', { timeoutMs: 5000 })).status);
        if (tick % 4 === 0) scrapes.push((await http.send('/metrics')).body.length);
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
    })();
    const statuses: Record<number, number> = {};
    await runBounded(KEYS, 32, async (i) => {
      const answer = await http.send(
        UNKNOWN_KEY_ROUTES[i % UNKNOWN_KEY_ROUTES.length]!(`flood-${i.toString(36)}`),
      );
      statuses[answer.status] = (statuses[answer.status] ?? 0) + 1;
    });
    flooding = false;
    await watch;
    const floodMs = Date.now() - startedAt;

    const metrics = (await http.send('/metrics')).body;
    const rssAfter = rssMb(app.pid);
    const heapAfter = metricSum(metrics, /^nodejs_heap_size_used_bytes /);
    const extensions = (outcome: string) =>
      metricSum(
        metrics,
        new RegExp(
          `^leaf_snowflake_lease_extension_duration_seconds_count\\{outcome="${outcome}"\\}`,
        ),
      );
    const figures = {
      keys: KEYS,
      floodMs,
      statuses,
      metricsBytes: metrics.length,
      largestScrape: Math.max(...scrapes),
      rssBeforeMb: Math.round(rssBefore),
      rssAfterMb: Math.round(rssAfter),
      heapUsedBeforeMb: Math.round(heapBefore / 2 ** 20),
      heapUsedAfterMb: Math.round(heapAfter / 2 ** 20),
      readinessPolls: readiness.length,
      readinessNot200: readiness.filter((status) => status !== 200).length,
      leaseExtensions: {
        ok: extensions('ok'),
        degraded: extensions('degraded'),
        error: extensions('error'),
      },
    };
    console.log(`[system] door flood: ${JSON.stringify(figures)}`);

    expect(Object.keys(statuses).filter((status) => Number(status) >= 500)).toEqual([]);
    expect(
      metrics
        .split('\n')
        .filter((line) => line.includes('flood-'))
        .slice(0, 3),
    ).toEqual([]);
    expect(metrics.length).toBeLessThanOrEqual(MAX_METRICS_BYTES);
    expect(rssAfter - rssBefore).toBeLessThanOrEqual(MAX_RSS_GROWTH_MB);
    expect(figures.readinessNot200).toBe(0);
    expect(figures.leaseExtensions.ok).toBeGreaterThan(0);
    expect(figures.leaseExtensions.degraded + figures.leaseExtensions.error).toBe(0);
  });
});
