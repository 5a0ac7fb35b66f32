/**
 * Sequence mode with its issuers elected in the database (docs/sequence.md, "On the database"): three application processes started as a deployer does (environment only, no
 * ZooKeeper: `LEAF_DB_URL` on MariaDB or PostgreSQL, `LEAF_SEQUENCE_ENABLED=true`, an advertised
 * address each) serve one key under load, every call recorded. The key's issuer is killed
 * (kill -9); later the next issuer is SIGSTOPped past its lease and resumed. The order checker
 * compares every pair of calls that did not overlap, and the IDs are checked for duplicates.
 */
import { Cluster, type ClusterInstance } from '../harness/cluster';
import { History } from '../harness/history';
import { Load, sequenceRoute } from '../harness/load';
import { sparePort } from '../harness/zookeeper-server';
import { sleep } from '../../support/id-load';
import { zookeeperConnectString } from '../../support/services';
import type { ScenarioSize } from './scenario';
import {
  allReady,
  sequenceReadiness,
  sequenceReport,
  type SequenceScenarioResult,
} from './sequence-order';

/** The lease of the issuer rows: short, so that a run takes seconds. */
export const DATABASE_LEASE_MS = 3000;
const LEASE_MARGIN_MS = 1000;
const HEARTBEAT_MS = 200;

const ISSUER = 'Sequence group 0: this instance is the issuer';
const DEMOTED = 'Sequence group 0: no longer the issuer';

/** The database of a run: its URL for `LEAF_DB_URL`, migrated, and one statement. */
export interface SequenceDatabase {
  readonly url: string;
  query(sql: string): Promise<unknown>;
}

/** What a run found besides the order check. */
export interface DatabaseSequenceResult extends SequenceScenarioResult {
  /** The others' longest stretch without an answer after the kill -9 of the issuer (ms). */
  readonly killHandoverMs: number;
  /** The others' longest stretch without an answer while the issuer was stopped (ms). */
  readonly pauseHandoverMs: number;
  /** Calls the paused issuer answered after its resumption: by status and code. */
  readonly resumedAnswers: Record<string, number>;
  /** The resumed issuer's log lines about group 0 after resumption. */
  readonly resumedLog: string;
}

/**
 * The instance that issues for group 0 now, by the log of its current incarnation (`from`:
 * where each began in `output`); waits up to `timeoutMs`.
 */
async function currentIssuer(
  cluster: Cluster,
  from: ReadonlyMap<string, number>,
  timeoutMs = 15_000,
): Promise<ClusterInstance> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const issuers = cluster.instances.filter((instance) => {
      const output = instance.output.slice(from.get(instance.name) ?? 0);
      return instance.running && output.lastIndexOf(ISSUER) > output.lastIndexOf(DEMOTED);
    });
    if (issuers.length === 1) return issuers[0]!;
    if (Date.now() >= until) throw new Error(`${issuers.length} issuers after ${timeoutMs} ms`);
    await sleep(50);
  }
}

/**
 * The handover a fault cost the other instances: the longest stretch within `[from, to]`
 * without a successful answer on an instance other than `except`.
 */
function handoverGap(history: History, from: number, to: number, except: string): number {
  const answered = history.operations
    .filter((op) => op.process !== except && op.type === 'ok')
    .map((op) => op.completeMs)
    .filter((at) => at >= from && at <= to)
    .sort((x, y) => x - y);
  let longest = 0;
  let previous = from;
  for (const at of [...answered, to]) {
    longest = Math.max(longest, at - previous);
    previous = at;
  }
  return longest;
}

/**
 * Runs the kill -9 and the SIGSTOP faults against the key's issuer while three instances
 * serve it, elected through `coordination` (ZooKeeper: the same run on `db`, for comparison).
 */
export async function databaseSequenceScenario(
  db: SequenceDatabase,
  engine: string,
  coordination: 'database' | 'zookeeper' = 'database',
  size: ScenarioSize = 'ci',
): Promise<DatabaseSequenceResult> {
  const key = 'seq';
  await db.query("INSERT INTO leaf_alloc (biz_tag, max_id, step) VALUES ('seq', 1, 1000)");
  const ports = [await sparePort(), await sparePort(), await sparePort()];
  const namespace = `seq${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
  const startedAt = Date.now();
  const election: Record<string, string> =
    coordination === 'database'
      ? { LEAF_SEQUENCE_LEASE_MS: String(DATABASE_LEASE_MS) }
      : {
          LEAF_SEQUENCE_ZK: zookeeperConnectString(),
          LEAF_SEQUENCE_SESSION_TIMEOUT_MS: String(DATABASE_LEASE_MS),
          // The high-water mark stays off: this run compares the elections alone.
          LEAF_SEGMENT_HIGH_WATER_ZK: 'off',
        };
  const cluster = await Cluster.start({
    size: 3,
    defaults: 'deployer',
    env: (_name, index) => ({
      PORT: String(ports[index]),
      HOST: '127.0.0.1',
      LEAF_DB_URL: db.url,
      LEAF_NAME: namespace,
      LEAF_SNOWFLAKE_ENABLED: 'false',
      LEAF_SEQUENCE_ENABLED: 'true',
      LEAF_SEQUENCE_ADVERTISE: `http://127.0.0.1:${ports[index]}`,
      LEAF_SEQUENCE_GROUPS: '1',
      LEAF_SEQUENCE_LEASE_MARGIN_MS: String(LEASE_MARGIN_MS),
      LEAF_SEQUENCE_HEARTBEAT_MS: String(HEARTBEAT_MS),
      // No waiting for an issuer: a refusal reaches the client as it is (typed 503), so the
      // resumed issuer's own refusals are seen instead of being retried into forwarded calls.
      LEAF_SEQUENCE_WAIT_MS: '0',
      ...election,
    }),
  });
  const history = new History();
  const facts: Record<string, unknown> = { engine, coordination };
  let killHandoverMs = -1;
  let pauseHandoverMs = -1;
  const resumedAnswers: Record<string, number> = {};
  let resumedLog = '';
  let paused: ClusterInstance | null = null;
  let loads: Load[] = [];
  const from = new Map<string, number>();
  try {
    facts.readyAfterStartMs = await allReady(cluster.instances, 4 * DATABASE_LEASE_MS);
    // Readiness names the election's source.
    for (const instance of cluster.instances) {
      expect((await sequenceReadiness(instance))?.details.coordination).toBe(coordination);
    }
    const started = cluster.instances.map((instance) => instance.output);
    expect(started.join('\n')).toContain(
      coordination === 'database'
        ? 'sequence issuers elected in the database (leaf_sequence_issuer)'
        : 'sequence issuers elected through ZooKeeper',
    );
    loads = cluster.instances.map((instance) =>
      Load.start({
        targets: [instance],
        routes: [sequenceRoute('get', key), sequenceRoute('ids', key, 10)],
        history,
        concurrency: size === 'ci' ? 3 : 8,
        durationMs: 600_000,
        timeoutMs: 3000,
        failurePauseMs: 20,
      }),
    );
    await sleep(2000);

    // kill -9 of the issuer: its row expires on the database's clock, a survivor claims it.
    const killed = await currentIssuer(cluster, from);
    const killedAt = Date.now();
    await killed.kill();
    await sleep(DATABASE_LEASE_MS + 3000);
    killHandoverMs = handoverGap(history, killedAt, Date.now(), killed.name);
    facts.killed = killed.name;
    from.set(killed.name, killed.output.length);
    await killed.start();
    await allReady(cluster.instances, 4 * DATABASE_LEASE_MS);
    await sleep(1500);

    // SIGSTOP of the next issuer past its lease, then SIGCONT: it must not issue again.
    paused = await currentIssuer(cluster, from);
    const pausedAt = Date.now();
    const before = paused.output.length;
    paused.pause();
    await sleep(DATABASE_LEASE_MS + 2500);
    const resumedAt = Date.now();
    pauseHandoverMs = handoverGap(history, pausedAt, resumedAt, paused.name);
    paused.resume();
    facts.paused = paused.name;
    await sleep(2500);
    resumedLog = paused.output
      .slice(before)
      .split('\n')
      .filter((line) => line.includes('Sequence group 0'))
      .join('\n');
    for (const op of history.operations) {
      if (op.process !== paused.name || op.completeMs < resumedAt) continue;
      const label = op.type === 'ok' ? 'ok' : `${op.status ?? '-'} ${op.error ?? op.type}`;
      resumedAnswers[label] = (resumedAnswers[label] ?? 0) + 1;
    }
    await sleep(1500);
    await Promise.all(loads.map((load) => load.stop()));
    await Promise.all(cluster.instances.map((instance) => instance.stop()));
  } finally {
    await Promise.all(loads.map((load) => load.stop()));
    await cluster.dispose();
  }
  Object.assign(facts, { killHandoverMs, pauseHandoverMs, resumedAnswers });
  const result = sequenceReport(
    `sequence-${coordination}-${engine}`,
    size,
    startedAt,
    history,
    null,
    facts,
  );
  return { ...result, killHandoverMs, pauseHandoverMs, resumedAnswers, resumedLog };
}

/**
 * The liveness and fencing claims of a run: the survivors answer again within a lease and a
 * few rounds of each fault, and the resumed issuer stepped down: it answers only typed 503s
 * (its lease ran out while it stood still) or forwarded calls, never issuing itself (the order
 * and uniqueness checks).
 */
export function expectDatabaseHandover(result: DatabaseSequenceResult): void {
  // Served again within the lease and a few rounds (not at the end of the window).
  expect(result.killHandoverMs).toBeLessThan(DATABASE_LEASE_MS + 2000);
  expect(result.pauseHandoverMs).toBeLessThan(DATABASE_LEASE_MS + 2000);
  expect(result.resumedLog).toContain(DEMOTED);
  // It never became the issuer again by itself in the meantime.
  expect(result.resumedLog).not.toContain(ISSUER);
  // Resumed, it refuses with a typed 503 what reached it before it looked again, and forwards
  // the rest to the new issuer (which of the two a call meets is a matter of timing).
  const untyped = Object.keys(result.resumedAnswers).filter(
    (label) =>
      /^\d/.test(label) && !/^503 LEAF_SEQUENCE_(LEASE_EXPIRED|NO_ISSUER|FENCED)$/.test(label),
  );
  expect(untyped).toEqual([]);
  expect(Object.values(result.resumedAnswers).reduce((sum, n) => sum + n, 0)).toBeGreaterThan(0);
}
