/**
 * Several databases per tag (docs/design.md, "Several databases per tag"; docs/reliability.md):
 * three private MariaDB servers serve the same tags, each its own residue class (3, i); three
 * application instances started as a deployer does (`LEAF_DB_URLS`, nothing else) serve
 * them under load with every ID recorded. One server is killed (SIGKILL) for `outageMs` and
 * started again; later another is frozen (SIGSTOP) for `outageMs` and resumed. Checked: no
 * ID twice, every ID in the class of one database; reported: the share of requests
 * answered, overall and during each fault, and the error counts.
 */
import { sleep } from '../../support/id-load';
import { Cluster } from '../harness/cluster';
import { History, type Operation } from '../harness/history';
import { Load, segmentRoute } from '../harness/load';
import { MariaDbServer } from '../harness/mariadb-server';
import { report, SIZES, type ScenarioReport, type ScenarioSize } from './scenario';

const TAGS = ['sys-multi-a', 'sys-multi-b'];

/** A fault's window and what was answered in it. */
export interface FaultWindow {
  readonly fault: 'kill -9' | 'SIGSTOP';
  readonly server: number;
  readonly from: number;
  readonly to: number;
  readonly ok: number;
  readonly failed: number;
  /** `ok / (ok + failed)` of the requests sent within the window. */
  readonly answered: number;
  /** Each instance's view of the servers during the fault, every 0.5 s (`/health/ready/segment`). */
  readonly readiness: string[];
}

/** Result of {@link segmentSeveralDatabases}. */
export interface SeveralDatabasesResult extends ScenarioReport {
  readonly history: History;
  readonly windows: readonly FaultWindow[];
  /** `ok / all` of every request of the run. */
  readonly answeredShare: number;
}

function share(operations: readonly Operation[]): { ok: number; failed: number; answered: number } {
  const ok = operations.filter((o) => o.type === 'ok').length;
  const failed = operations.length - ok;
  return { ok, failed, answered: operations.length === 0 ? 1 : ok / operations.length };
}

/** Each instance's `databases` states, as `p0: up,down,up`. */
async function readinessOf(cluster: Cluster): Promise<string[]> {
  return Promise.all(
    cluster.instances.map(async (instance) => {
      try {
        const answer = await fetch(`${instance.baseUrl()}/health/ready/segment`);
        const body = (await answer.json()) as {
          details?: { segment?: { databases?: { sources: Array<{ state: string }> } } };
          error?: { segment?: { databases?: { sources: Array<{ state: string }> } } };
        };
        const segment = body.details?.segment ?? body.error?.segment;
        const states = segment?.databases?.sources.map((s) => s.state).join(',') ?? '?';
        return `${instance.name} ${answer.status}: ${states}`;
      } catch (error) {
        return `${instance.name}: ${String(error)}`;
      }
    }),
  );
}

/**
 * Runs the scenario on three private servers it starts and disposes of. `outageMs`: how
 * long each fault lasts (30 s in the full run, about 5 s in the short one).
 */
export async function segmentSeveralDatabases(
  size: ScenarioSize,
  outageMs: number,
): Promise<SeveralDatabasesResult> {
  const settings = SIZES[size];
  const servers: MariaDbServer[] = [];
  const history = new History();
  let cluster: Cluster | null = null;
  try {
    const started = await Promise.allSettled([0, 1, 2].map(() => MariaDbServer.start()));
    for (const outcome of started) if (outcome.status === 'fulfilled') servers.push(outcome.value);
    const failed = started.find((outcome) => outcome.status === 'rejected');
    if (failed) throw (failed as PromiseRejectedResult).reason;
    for (const [i, server] of servers.entries()) {
      // The app's demo-tag seed is the same row in every database: a clash (docs/operations.md).
      await server.database.query("DELETE FROM leaf_alloc WHERE biz_tag = 'leaf-segment-test'");
      for (const tag of TAGS) {
        await server.database.query(
          'INSERT INTO leaf_alloc (biz_tag, max_id, step, id_modulus, id_residue) VALUES (?, 1, 1000, 3, ?)',
          [tag, i],
        );
      }
    }
    const startedAt = Date.now();
    cluster = await Cluster.start({
      size: 3,
      defaults: 'deployer',
      env: () => ({
        LEAF_DB_URLS: servers.map((s) => s.url).join(','),
        LEAF_SNOWFLAKE_ENABLED: 'false',
        LEAF_SEGMENT_WARM_TAGS: TAGS.join(','),
        // Small ranges: every database is asked every second or so, so each fault is met.
        LEAF_SEGMENT_MAX_STEP: '3000',
      }),
    });
    const loads = cluster.instances.map((instance) =>
      Load.start({
        targets: [instance],
        routes: TAGS.flatMap((tag) => [segmentRoute('get', tag), segmentRoute('ids', tag, 20)]),
        history,
        concurrency: Math.max(2, Math.ceil(settings.concurrency / 3)),
        durationMs: 900_000,
        pauseMs: 2,
      }),
    );
    const windows: FaultWindow[] = [];
    const fault = async (
      kind: FaultWindow['fault'],
      server: number,
      begin: () => Promise<void> | void,
      end: () => Promise<void> | void,
    ) => {
      const from = Date.now();
      await begin();
      // Each instance's view, every half second of the fault: an instance marks a server down
      // when an allocation on it fails, which a busy machine may delay by a second or two.
      const readiness: string[] = [];
      while (Date.now() - from < outageMs - 500) {
        await sleep(500);
        readiness.push(...(await readinessOf(cluster!)));
      }
      await sleep(Math.max(0, outageMs - (Date.now() - from)));
      await end();
      const to = Date.now();
      const within = history.operations.filter((o) => o.invokeMs >= from && o.invokeMs < to);
      windows.push({ fault: kind, server, from, to, ...share(within), readiness });
    };
    await sleep(settings.loadMs / 3);
    await fault(
      'kill -9',
      1,
      () => servers[1]!.kill(),
      () => servers[1]!.start(),
    );
    await sleep(settings.loadMs / 3);
    await fault(
      'SIGSTOP',
      2,
      () => servers[2]!.pause(),
      () => servers[2]!.resume(),
    );
    await sleep(settings.loadMs / 3);
    await Promise.all(loads.map((load) => load.stop()));
    await Promise.all(cluster.instances.map((instance) => instance.stop()));
    const overall = share(history.operations);
    const residues: Record<string, number> = {};
    for (const o of history.operations) {
      for (const id of o.ids) residues[String(id % 3n)] = (residues[String(id % 3n)] ?? 0) + 1;
    }
    const base = report(
      `segment several databases, ${outageMs / 1000} s faults`,
      size,
      startedAt,
      history,
      {
        answered: overall.answered,
        windows: windows.map((w) => ({
          fault: w.fault,
          server: w.server,
          ms: w.to - w.from,
          ok: w.ok,
          failed: w.failed,
          answered: w.answered,
          readiness: [...new Set(w.readiness)],
        })),
        idsByResidue: residues,
      },
    );
    return { ...base, history, windows, answeredShare: overall.answered };
  } finally {
    await cluster?.dispose();
    for (const server of servers) {
      server.resume();
      await server.dispose();
    }
  }
}

/** The expectations: no duplicate; every fault window answered; the databases seen down. */
export function expectSeveralDatabasesHandled(result: SeveralDatabasesResult): void {
  expect(result.unique.duplicates).toEqual([]);
  expect(result.unique.valid).toBe(true);
  expect(result.unique.ids).toBeGreaterThan(1000);
  expect(result.windows).toHaveLength(2);
  for (const window of result.windows) {
    // Every instance saw the lost server as down while the others served.
    for (const line of window.readiness) expect(line).toMatch(/ 200: /);
    expect(window.readiness.some((line) => line.includes('down'))).toBe(true);
    expect(window.ok).toBeGreaterThan(0);
  }
  // The target is all of them; a request already waiting on the lost server may fail.
  expect(result.answeredShare).toBeGreaterThan(0.99);
}
