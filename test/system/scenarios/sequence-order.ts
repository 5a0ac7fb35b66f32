/**
 * Sequence mode under faults (docs/design.md, "Sequence mode"; figures in docs/reliability.md):
 * three application processes (started as a deployer does: `node dist/src/main.js`,
 * configuration by environment) serve one key, each loaded by its own clients that record
 * when every call was sent and answered; the key's issuer is killed, paused past its
 * session, cut off from ZooKeeper or restarted. The order checker then compares every pair
 * of calls that did not overlap (test/system/harness/order-checker.ts), and the IDs are
 * checked for duplicates.
 */
import { availability, type AvailabilityCounts } from '../harness/checker';
import { Cluster, type ClusterInstance } from '../harness/cluster';
import { History } from '../harness/history';
import { Load, sequenceRoute } from '../harness/load';
import { checkOrder, type OrderResult } from '../harness/order-checker';
import { sparePort } from '../harness/zookeeper-server';
import { sleep } from '../../support/id-load';
import { zookeeperEndpoint } from '../../support/services';
import { TcpProxy } from '../../support/tcp-proxy';
import type { TestDatabase } from '../../support/test-database';
import type { MariaDbServer } from '../harness/mariadb-server';
import { report, type ScenarioReport, type ScenarioSize } from './scenario';

/** The faults of the scenario. */
export type SequenceFault = 'none' | 'kill' | 'pause' | 'partition' | 'restart' | 'database';

/** How long the `database` fault keeps the (private) database stopped. */
const DATABASE_STOP_MS = 8000;

/** Session settings of the instances: short, so that a run takes seconds. */
export const SEQUENCE_TEST_SESSION_MS = 4000;
const LEASE_MARGIN_MS = 1000;
const HEARTBEAT_MS = 200;

const SIZES: Record<ScenarioSize, { loadMs: number; concurrency: number }> = {
  ci: { loadMs: 6_000, concurrency: 4 },
  full: { loadMs: 30_000, concurrency: 12 },
};

/** The report of one run. */
export interface SequenceScenarioResult extends ScenarioReport {
  readonly order: OrderResult;
  /** The issuer the fault hit (`null` without a fault). */
  readonly faulted: string | null;
  /** The longest stretch without a successful call on the instances the fault did not hit. */
  readonly survivorsLongestGapMs: number;
  /** Calls refused (error code → count) on the instances the fault did not hit. */
  readonly survivorsErrors: AvailabilityCounts['errors'];
}

const ISSUER = 'Sequence group 0: this instance is the issuer';
const DEMOTED = 'Sequence group 0: no longer the issuer';

/** The instance that issues for group 0 now, by its log; waits up to `timeoutMs`. */
export async function currentIssuer(
  cluster: Cluster,
  timeoutMs = 15_000,
): Promise<ClusterInstance> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const issuers = cluster.instances.filter(
      (instance) =>
        instance.running &&
        instance.output.lastIndexOf(ISSUER) > instance.output.lastIndexOf(DEMOTED),
    );
    if (issuers.length === 1) return issuers[0]!;
    if (Date.now() >= until) throw new Error(`${issuers.length} issuers after ${timeoutMs} ms`);
    await sleep(100);
  }
}

/** The readiness of sequence mode on `instance` (status and details), or null when unreachable. */
export async function sequenceReadiness(
  instance: ClusterInstance,
): Promise<{ status: number; details: Record<string, unknown> } | null> {
  const base = instance.baseUrl();
  if (base === null) return null;
  try {
    const answer = await fetch(`${base}/health/ready/sequence`, {
      signal: AbortSignal.timeout(2000),
    });
    const body = (await answer.json()) as { details?: { sequence?: Record<string, unknown> } };
    return { status: answer.status, details: body.details?.sequence ?? {} };
  } catch {
    return null;
  }
}

/** Waits until every running instance's sequence readiness is 200; returns how long it took. */
export async function allReady(
  instances: readonly ClusterInstance[],
  timeoutMs: number,
): Promise<number> {
  const started = Date.now();
  for (;;) {
    const states = await Promise.all(instances.map(sequenceReadiness));
    if (states.every((s) => s?.status === 200)) return Date.now() - started;
    if (Date.now() - started > timeoutMs) {
      throw new Error(`not ready after ${timeoutMs} ms: ${JSON.stringify(states)}`);
    }
    await sleep(100);
  }
}

/** Runs `fault` against the key's issuer while three instances serve it. */
export async function sequenceScenario(
  db: TestDatabase,
  fault: SequenceFault,
  size: ScenarioSize = 'ci',
  /** The private server of `db`, for the `database` fault. */
  server?: MariaDbServer,
): Promise<SequenceScenarioResult> {
  const settings = SIZES[size];
  const key = 'seq';
  await db.query('INSERT INTO leaf_alloc (biz_tag, max_id, step) VALUES (?, 1, 1000)', [key]);
  const zk = zookeeperEndpoint();
  // One proxy per instance in front of ZooKeeper, so one instance alone can be cut off.
  const proxies = [0, 1, 2].map(() => new TcpProxy(zk));
  await Promise.all(proxies.map((proxy) => proxy.start()));
  const ports = [await sparePort(), await sparePort(), await sparePort()];
  const namespace = `seq${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
  const startedAt = Date.now();
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
      LEAF_SEQUENCE_ZK: `127.0.0.1:${proxies[index]!.port}`,
      LEAF_SEQUENCE_ADVERTISE: `http://127.0.0.1:${ports[index]}`,
      LEAF_SEQUENCE_GROUPS: '1',
      LEAF_SEQUENCE_SESSION_TIMEOUT_MS: String(SEQUENCE_TEST_SESSION_MS),
      LEAF_SEQUENCE_LEASE_MARGIN_MS: String(LEASE_MARGIN_MS),
      LEAF_SEQUENCE_HEARTBEAT_MS: String(HEARTBEAT_MS),
    }),
  });
  const history = new History();
  let faulted: ClusterInstance | null = null;
  const facts: Record<string, unknown> = {};
  try {
    // A cluster's first issuer waits a session timeout (docs/design.md, "A ZooKeeper that
    // forgot"); readiness says when every instance serves.
    facts.readyAfterStartMs = await allReady(cluster.instances, 4 * SEQUENCE_TEST_SESSION_MS);
    const loads = cluster.instances.map((instance) =>
      Load.start({
        targets: [instance],
        routes: [sequenceRoute('get', key), sequenceRoute('ids', key, 10)],
        history,
        concurrency: settings.concurrency,
        durationMs: 600_000,
        failurePauseMs: 20,
      }),
    );
    await sleep(settings.loadMs / 3);
    if (fault !== 'none') {
      faulted = await currentIssuer(cluster);
      const index = cluster.instances.indexOf(faulted);
      const hitAt = Date.now();
      switch (fault) {
        case 'kill':
          await faulted.kill();
          break;
        case 'pause':
          faulted.pause();
          await sleep(SEQUENCE_TEST_SESSION_MS + 2000);
          faulted.resume();
          break;
        case 'partition':
          proxies[index]!.refuse(true);
          await sleep(SEQUENCE_TEST_SESSION_MS + 2000);
          proxies[index]!.refuse(false);
          break;
        case 'restart':
          await faulted.restart();
          break;
        case 'database':
          if (!server) throw new Error('the database fault needs a private server');
          await server.stop();
          await sleep(DATABASE_STOP_MS);
          await server.start();
          break;
      }
      const successor = await currentIssuer(cluster);
      facts.successor = successor.name;
      facts.faultMs = Date.now() - hitAt;
    }
    await sleep(settings.loadMs / 3);
    if (fault === 'kill' && faulted) await faulted.start();
    await sleep(settings.loadMs / 3);
    await Promise.all(loads.map((load) => load.stop()));
    await Promise.all(cluster.instances.map((instance) => instance.stop()));
  } finally {
    await cluster.dispose();
    await Promise.all(proxies.map((proxy) => proxy.stop()));
  }
  return sequenceReport(`sequence-${fault}`, size, startedAt, history, faulted, facts);
}

/**
 * The order check and the report of a sequence run: calls checked, order violations,
 * duplicates, and the availability of the instances `faulted` is not.
 */
export function sequenceReport(
  scenario: string,
  size: ScenarioSize,
  startedAt: number,
  history: History,
  faulted: ClusterInstance | null,
  facts: Record<string, unknown>,
): SequenceScenarioResult {
  const order = checkOrder(history);
  const survivors = new History();
  for (const operation of history.operations) {
    if (operation.process !== faulted?.name) survivors.append(operation);
  }
  const survivorsAvailability = availability(survivors);
  const base = report(scenario, size, startedAt, history, {
    ...facts,
    faulted: faulted?.name ?? null,
    callsChecked: order.calls,
    pairsChecked: order.pairsChecked,
    orderViolations: order.violationCount,
    orderDuplicates: order.duplicateCount,
    survivorsLongestGapMs: survivorsAvailability.longestGapMs,
    survivorsErrors: survivorsAvailability.errors,
  });
  return {
    ...base,
    order,
    faulted: faulted?.name ?? null,
    survivorsLongestGapMs: survivorsAvailability.longestGapMs,
    survivorsErrors: survivorsAvailability.errors,
  };
}

/** The safety claims: every pair of non-overlapping calls in order, no ID twice. */
export function expectSequenceSafe(result: SequenceScenarioResult): void {
  expect(result.order.violations).toEqual([]);
  expect(result.order.violationCount).toBe(0);
  expect(result.order.duplicateCount).toBe(0);
  expect(result.order.unorderedAnswers).toBe(0);
  expect(result.unique.duplicateCount).toBe(0);
  // The run checked real traffic on every instance.
  expect(result.order.calls).toBeGreaterThan(100);
}
