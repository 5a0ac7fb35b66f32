/**
 * Every mode on PostgreSQL with no ZooKeeper (docs/reliability.md, "Coordination in the
 * database"): three application processes started as a deployer does (`LEAF_DB_URL` of a
 * private PostgreSQL server through a TCP proxy of each instance's own, `NODE_ENV=production`,
 * nothing else but the addresses and short leases), segment, snowflake (worker IDs leased from
 * `leaf_worker_lease`) and sequence mode (the issuer elected in `leaf_sequence_issuer`) under
 * load at once, every call recorded, one fault per run:
 *
 * - `kill-cycle`: an instance killed with `kill -9` and started again every few seconds;
 * - `pause`: the sequence issuer paused (SIGSTOP) for longer than its leases, then resumed;
 * - `cut`: the issuer's path to the database cut for longer than a lease (TCP proxy);
 * - `stall`: the database paused (SIGSTOP) for longer than a lease: it answers nothing;
 * - `restart`: the database restarted (fast shutdown, started 3 s later);
 * - `clock-step`: one instance's wall clock stepped back 3 s, then forward again
 *   (libfaketime; its monotonic clock stays real).
 *
 * Checked: no ID twice within a mode; no millisecond of a snowflake worker ID used by two
 * instances; every sequence call ordered after every call that completed before it was sent.
 */
import { FaketimeClock } from '../../support/faketime';
import { sleep } from '../../support/id-load';
import { TcpProxy } from '../../support/tcp-proxy';
import { Cluster } from '../harness/cluster';
import { History } from '../harness/history';
import { Load, segmentRoute, sequenceRoute, snowflakeRoute } from '../harness/load';
import { sparePort } from '../harness/mariadb-server';
import { checkOrder } from '../harness/order-checker';
import type { PostgresServer } from '../harness/postgres-server';
import { report, SIZES, type ScenarioReport, type ScenarioSize } from './scenario';
import { currentIssuer } from './sequence-order';

/** The faults, one per run. */
export type CoordinationFault = 'kill-cycle' | 'pause' | 'cut' | 'stall' | 'restart' | 'clock-step';

/** Snowflake leases and the sequence issuer's lease of the runs. */
export const LEASE_MS = 4_000;
const TAG = 'sys-db-seg';
const KEY = 'sys-db-seq';
/** Leaf's layout: the 12 low bits are the sequence within a millisecond and worker ID. */
const WORKER_SHIFT = 12n;

/** The figures of a run, for the spec's assertions and docs/reliability.md. */
export interface CoordinationResult extends ScenarioReport {
  /** Millisecond-and-worker pairs of snowflake IDs that two instances used. */
  readonly sharedMilliseconds: number;
  readonly sequence: {
    calls: number;
    duplicates: number;
    violations: number;
    unordered: number;
  };
  readonly okByMode: Record<'segment' | 'snowflake' | 'sequence', number>;
}

/**
 * Millisecond-and-worker pairs that IDs of two different instances decode to: a worker ID
 * held by two live processes at once would show here.
 */
function sharedWorkerMilliseconds(history: History): number {
  const owner = new Map<bigint, string>();
  let shared = 0;
  for (const o of history.operations) {
    if (o.type !== 'ok' || !o.route.startsWith('snowflake/')) continue;
    for (const id of o.ids) {
      const slot = id >> WORKER_SHIFT; // time and worker ID
      const seen = owner.get(slot);
      if (seen === undefined) owner.set(slot, o.process);
      else if (seen !== o.process) shared++;
    }
  }
  return shared;
}

/** Waits until every instance answers 200 on `/health/ready` (at most `timeoutMs`). */
async function allReady(cluster: Cluster, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (const instance of cluster.instances) {
    for (;;) {
      const answer = await fetch(`${instance.baseUrl()}/health/ready`).catch(() => null);
      if (answer?.status === 200) break;
      if (Date.now() > deadline) throw new Error(`${instance.name} is not ready`);
      await sleep(200);
    }
  }
}

/** Runs `fault` while three instances serve every mode from `server`. */
export async function databaseCoordination(
  server: PostgresServer,
  fault: CoordinationFault,
  size: ScenarioSize,
): Promise<CoordinationResult> {
  const settings = SIZES[size];
  for (const tag of [TAG, KEY]) {
    await server.database.query(
      'INSERT INTO leaf_alloc (biz_tag, max_id, step) VALUES ($1, 1, 1000) ON CONFLICT DO NOTHING',
      [tag],
    );
  }
  const proxies = [0, 1, 2].map(() => new TcpProxy({ host: '127.0.0.1', port: server.port }));
  await Promise.all(proxies.map((proxy) => proxy.start()));
  const ports = [await sparePort(), await sparePort(), await sparePort()];
  const clock = fault === 'clock-step' ? new FaketimeClock(0) : null;
  const name = `sysdb${Date.now().toString(36)}`;
  const startedAt = Date.now();
  const cluster = Cluster.create({
    size: 3,
    defaults: 'deployer',
    startTimeoutMs: 90_000,
    env: (_name, index) => ({
      NODE_ENV: 'production',
      PORT: String(ports[index]),
      HOST: '127.0.0.1',
      LEAF_NAME: name,
      LEAF_DB_URL: `postgres://postgres@127.0.0.1:${proxies[index]!.port}/leaf`,
      LEAF_SEQUENCE_ENABLED: 'true',
      LEAF_SEQUENCE_GROUPS: '1',
      LEAF_SEQUENCE_ADVERTISE: `http://127.0.0.1:${ports[index]}`,
      // Production refuses sequence mode without one: the forwarded calls are signed.
      LEAF_CLUSTER_SECRET: `${name}-cluster-secret`.padEnd(40, 's'),
      LEAF_SEQUENCE_LEASE_MS: String(LEASE_MS),
      LEAF_SNOWFLAKE_LEASE_MS: String(LEASE_MS),
      LEAF_SNOWFLAKE_HEARTBEAT_MS: '1000',
      LEAF_SEGMENT_WARM_TAGS: TAG,
    }),
  });
  const history = new History();
  const facts: Record<string, unknown> = { fault };
  try {
    await Promise.all(
      cluster.instances.map((instance, i) => instance.start(i === 0 && clock ? clock.env() : {})),
    );
    await allReady(cluster, 30_000);
    const loads = cluster.instances.flatMap((instance) => [
      Load.start({
        targets: [instance],
        routes: [segmentRoute('get', TAG), segmentRoute('ids', TAG, 20)],
        history,
        concurrency: 2,
        durationMs: 600_000,
        pauseMs: 2,
        failurePauseMs: 20,
      }),
      Load.start({
        targets: [instance],
        routes: [snowflakeRoute('get'), snowflakeRoute('ids', 'k', 20)],
        history,
        concurrency: 2,
        durationMs: 600_000,
        pauseMs: 2,
        failurePauseMs: 20,
      }),
      Load.start({
        targets: [instance],
        routes: [sequenceRoute('get', KEY), sequenceRoute('ids', KEY, 10)],
        history,
        concurrency: Math.max(2, settings.concurrency / 4),
        durationMs: 600_000,
        failurePauseMs: 20,
      }),
    ]);
    await sleep(settings.loadMs / 3);
    const hitAt = Date.now();
    const outage = LEASE_MS + 2_000;
    switch (fault) {
      case 'kill-cycle': {
        // Round robin, one every few seconds, each started again at once.
        const until = Date.now() + Math.max(settings.loadMs, 12_000);
        let kills = 0;
        while (Date.now() < until) {
          const victim = cluster.instances[kills % 3]!;
          await victim.kill();
          await victim.start();
          kills++;
          await sleep(2_000);
        }
        facts.kills = kills;
        break;
      }
      case 'pause': {
        const issuer = await currentIssuer(cluster, 20_000);
        facts.paused = issuer.name;
        issuer.pause();
        await sleep(outage);
        issuer.resume();
        break;
      }
      case 'cut': {
        const issuer = await currentIssuer(cluster, 20_000);
        facts.cut = issuer.name;
        const proxy = proxies[cluster.instances.indexOf(issuer)]!;
        proxy.refuse(true);
        await sleep(outage);
        proxy.refuse(false);
        break;
      }
      case 'stall':
        server.pause();
        await sleep(outage);
        server.resume();
        break;
      case 'restart':
        await server.stop();
        await sleep(3_000);
        await server.start();
        break;
      case 'clock-step':
        clock!.set(-3_000);
        await sleep(outage);
        clock!.set(0);
        break;
    }
    facts.faultMs = Date.now() - hitAt;
    // Every instance serves every mode again (a deposed holder restarts nothing by itself
    // but takes a worker ID again: readiness says when).
    const recoveredFrom = Date.now();
    await allReady(cluster, 60_000).catch((error: unknown) => {
      facts.notReady = String(error);
    });
    facts.readyAgainMs = Date.now() - recoveredFrom;
    await sleep(settings.loadMs / 3);
    await Promise.all(loads.map((load) => load.stop()));
    await Promise.all(cluster.instances.map((instance) => instance.stop()));
  } finally {
    await cluster.dispose();
    await Promise.all(proxies.map((proxy) => proxy.stop()));
    clock?.dispose();
  }
  const byMode = (mode: string) =>
    history.operations.filter((o) => o.type === 'ok' && o.route.startsWith(`${mode}/`)).length;
  const okByMode = {
    segment: byMode('segment'),
    snowflake: byMode('snowflake'),
    sequence: byMode('sequence'),
  };
  const sharedMilliseconds = sharedWorkerMilliseconds(history);
  const order = checkOrder(history, ['sequence/get', 'sequence/ids']);
  const base = report(`database coordination on PostgreSQL, ${fault}`, size, startedAt, history, {
    ...facts,
    sharedMilliseconds,
    sequenceCalls: order.calls,
    sequenceDuplicates: order.duplicateCount,
    orderViolations: order.violationCount,
    okByMode,
  });
  return {
    ...base,
    sharedMilliseconds,
    sequence: {
      calls: order.calls,
      duplicates: order.duplicateCount,
      violations: order.violationCount,
      unordered: order.unorderedAnswers,
    },
    okByMode,
  };
}

/** The safety claims of every run, and real traffic in every mode. */
export function expectCoordinationSafe(result: CoordinationResult): void {
  expect(result.unique.dropped).toBe(0);
  expect(result.unique.duplicateCount).toBe(0);
  expect(result.sharedMilliseconds).toBe(0);
  expect(result.sequence.duplicates).toBe(0);
  expect(result.sequence.violations).toBe(0);
  expect(result.sequence.unordered).toBe(0);
  expect(result.okByMode.segment).toBeGreaterThan(100);
  expect(result.okByMode.snowflake).toBeGreaterThan(100);
  expect(result.okByMode.sequence).toBeGreaterThan(100);
  expect(result.facts.notReady).toBeUndefined();
}
