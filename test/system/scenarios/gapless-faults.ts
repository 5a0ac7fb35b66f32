/**
 * Gapless series under faults (docs/design.md, "Gapless numbers"): three application processes started
 * by environment only (`defaults: 'deployer'`) on a private PostgreSQL or MariaDB server, each
 * reaching it through a TCP proxy of its own, while clients reserve under idempotency keys,
 * retry, confirm, void or abandon ({@link GaplessClients}, every answer recorded). Faults, in
 * turn: kill -9 of the instance holding the series' lock (the one issuing at that moment:
 * there is no elected issuer, docs/gapless.md "Design"), SIGSTOP of the next holder for longer
 * than the lock wait and the TTL, then SIGCONT; every database connection cut; the database
 * stopped and started again. Throughout, a client whose request timed out or was refused
 * retries the same key on another instance. Then `verify` (route and `leaf numbers verify`)
 * and the answers against the rows (`gapless-checker.ts`).
 */
import { runCli } from '../../../src/cli';
import { sleep } from '../../support/id-load';
import { TcpProxy } from '../../support/tcp-proxy';
import { Cluster, type ClusterInstance } from '../harness/cluster';
import { GaplessClients, type GaplessAnswer } from '../harness/gapless-clients';
import {
  checkGaplessAnswers,
  type GaplessCheck,
  type GaplessRowSeen,
} from '../harness/gapless-checker';
import { bigintJson, type ScenarioSize } from './scenario';

/** A private database server the scenario may stop and start (MariaDbServer, PostgresServer). */
export interface GaplessServer {
  readonly port: number;
  /** `LEAF_DB_URL` straight to the server. */
  readonly url: string;
  readonly database: { query<T>(sql: string): Promise<T[]> };
  stop(): Promise<void>;
  start(): Promise<void>;
}

export type GaplessEngine = 'postgres' | 'mariadb';

const SERIES = 'inv';
const ADMIN_TOKEN = 'system-gapless-admin-0123456789';
/** The TTL of every reservation. */
export const TTL_MS = 4000;
/** The app's sweep period (`GAPLESS_DEFAULTS.sweepIntervalMs`; the app does not change it). */
export const SWEEP_MS = 5000;
/** The app's lock wait (`GAPLESS_DEFAULTS.lockWaitMs`). */
const LOCK_WAIT_MS = 2000;
/** The bound on settling every number after the load stops: TTL + a sweep period + a lock wait. */
export const SETTLE_BOUND_MS = TTL_MS + SWEEP_MS + LOCK_WAIT_MS;

/** What a run found. */
export interface GaplessFaultsResult {
  readonly engine: GaplessEngine;
  readonly check: GaplessCheck;
  /** `GET /admin/gapless/inv/verify` once every number was settled. */
  readonly report: Record<string, unknown>;
  /** `leaf numbers verify inv --json`: exit code and report. */
  readonly cli: { code: number; report: Record<string, unknown> };
  /** From the end of the load until `pending` was 0 (`null`: not within twice the bound). */
  readonly settledMs: number | null;
  readonly answers: readonly GaplessAnswer[];
  /** What each fault hit, and the answers seen. */
  readonly facts: Record<string, unknown>;
}

/** A proxy per instance: the server's sessions are told apart by the proxy's local ports. */
class InstanceProxy {
  readonly ports = new Set<number>();
  readonly proxy: TcpProxy;

  constructor(target: { host: string; port: number }) {
    this.proxy = new TcpProxy(target, (client, upstream) => {
      upstream.once('connect', () => this.ports.add(upstream.localPort!));
      client.pipe(upstream).pipe(client);
    });
  }
}

/** Client ports of the sessions holding a transaction that took the series' lock. */
async function holderPorts(engine: GaplessEngine, server: GaplessServer): Promise<number[]> {
  // Every gapless transaction locks the series row first: the session with a transaction ID
  // (PostgreSQL) or row locks (InnoDB) that is not waiting for a lock holds it.
  const rows =
    engine === 'postgres'
      ? await server.database.query<{ port: number }>(
          "SELECT client_port AS port FROM pg_stat_activity WHERE backend_xid IS NOT NULL AND coalesce(wait_event_type, '') <> 'Lock' AND pid <> pg_backend_pid()",
        )
      : await server.database.query<{ host: string }>(
          "SELECT p.HOST AS host FROM information_schema.INNODB_TRX t JOIN information_schema.PROCESSLIST p ON p.ID = t.trx_mysql_thread_id WHERE t.trx_state = 'RUNNING' AND t.trx_rows_locked > 0",
        );
  return rows.map((row) =>
    'port' in row ? Number(row.port) : Number(String(row.host).split(':').pop()),
  );
}

/**
 * The instance holding the series' lock, frozen (SIGSTOP) while it holds it: found by its
 * session, stopped, and found again holding it (else resumed and looked for again).
 */
async function freezeHolder(
  engine: GaplessEngine,
  server: GaplessServer,
  cluster: Cluster,
  proxies: readonly InstanceProxy[],
): Promise<{ instance: ClusterInstance; tries: number }> {
  const holderOf = async () => {
    const ports = await holderPorts(engine, server);
    return cluster.instances.find(
      (instance, i) => instance.running && ports.some((port) => proxies[i]!.ports.has(port)),
    );
  };
  for (let tries = 1; tries <= 2000; tries++) {
    const holder = await holderOf();
    if (!holder) continue;
    holder.pause();
    if ((await holderOf()) === holder) return { instance: holder, tries };
    holder.resume();
  }
  throw new Error('no instance was seen holding the series lock');
}

/** Sizes: client loops and the load between faults. */
const SIZES: Record<ScenarioSize, { concurrency: number; betweenMs: number }> = {
  ci: { concurrency: 8, betweenMs: 3000 },
  full: { concurrency: 16, betweenMs: 6000 },
};

/** See the file. */
export async function gaplessFaultsScenario(
  engine: GaplessEngine,
  server: GaplessServer,
  size: ScenarioSize,
): Promise<GaplessFaultsResult> {
  const { concurrency, betweenMs } = SIZES[size];
  const proxies = Array.from(
    { length: 3 },
    () => new InstanceProxy({ host: '127.0.0.1', port: server.port }),
  );
  for (const { proxy } of proxies) await proxy.start();
  const through = (index: number) => {
    const url = new URL(server.url);
    url.port = String(proxies[index]!.proxy.port);
    return url.toString();
  };
  const cluster = await Cluster.start({
    size: 3,
    defaults: 'deployer',
    env: (_name, index) => ({
      HOST: '127.0.0.1',
      LEAF_DB_URL: through(index),
      LEAF_GAPLESS: 'true',
      LEAF_SNOWFLAKE_ENABLED: 'false',
      LEAF_ADMIN_TOKEN: ADMIN_TOKEN,
    }),
  });
  const facts: Record<string, unknown> = { engine, size, concurrency };
  const phases: Array<{ name: string; from: number; to: number }> = [];
  const phase = (name: string) => {
    const now = Date.now();
    if (phases.length > 0) phases[phases.length - 1]!.to = now;
    phases.push({ name, from: now, to: now });
  };
  let clients: GaplessClients | null = null;
  try {
    const admin = (path: string, init: RequestInit = {}) =>
      fetch(`${cluster.instances[0]!.baseUrl()}/admin/gapless${path}`, {
        ...init,
        headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
      });
    const created = await admin('', {
      method: 'POST',
      body: JSON.stringify({ name: SERIES, prefix: 'INV', width: 9, period: 'none' }),
    });
    if (created.status !== 201) throw new Error(`series not created: ${await created.text()}`);
    clients = new GaplessClients({
      targets: cluster.instances,
      series: SERIES,
      concurrency,
      ttlMs: TTL_MS,
    });
    phase('warm-up');
    await sleep(betweenMs);

    // kill -9 of the instance holding the series' lock, mid-transaction; started again.
    const killed = await freezeHolder(engine, server, cluster, proxies);
    phase('kill -9');
    // Straight from the stopped state: `kill()` would continue it first.
    process.kill(killed.instance.pid!, 'SIGKILL');
    await killed.instance.kill();
    facts.killed = { instance: killed.instance.name, tries: killed.tries };
    await sleep(betweenMs / 2);
    await killed.instance.start();
    await sleep(betweenMs);

    // SIGSTOP of the next holder past the lock wait and the TTL, with the lock held; SIGCONT.
    const paused = await freezeHolder(engine, server, cluster, proxies);
    phase('SIGSTOP');
    const pausedAt = Date.now();
    await sleep(TTL_MS + LOCK_WAIT_MS);
    paused.instance.resume();
    phase('SIGCONT');
    facts.paused = {
      instance: paused.instance.name,
      tries: paused.tries,
      ms: Date.now() - pausedAt,
    };
    await sleep(betweenMs);

    // Every database connection cut for 2 s.
    phase('cut');
    for (const { proxy } of proxies) proxy.refuse(true);
    await sleep(2000);
    for (const { proxy } of proxies) proxy.refuse(false);
    phase('reconnected');
    await sleep(betweenMs);

    // The database stopped, down for 3 s, started again.
    phase('database stopped');
    const stoppedAt = Date.now();
    await server.stop();
    await sleep(3000);
    await server.start();
    phase('database started');
    facts.databaseDownMs = Date.now() - stoppedAt;
    await sleep(betweenMs * 1.5);

    await clients.stop();
    phase('end');
    const loadEnd = Date.now();
    const verify = async () =>
      (await (await admin(`/${SERIES}/verify`)).json()) as Record<string, unknown>;
    let report = await verify();
    let settledMs: number | null = null;
    while (Date.now() - loadEnd < 2 * SETTLE_BOUND_MS) {
      if (report.pending === 0) {
        settledMs = Date.now() - loadEnd;
        break;
      }
      await sleep(250);
      report = await verify();
    }
    const cast = engine === 'postgres' ? 'CAST(number AS text)' : 'CAST(number AS CHAR)';
    const rows = await server.database.query<{
      idem_key: string;
      number: string;
      state: string;
      reason: string | null;
    }>(
      `SELECT idem_key, ${cast} AS number, state, reason FROM leaf_gapless_number WHERE series = '${SERIES}'`,
    );
    const seen: GaplessRowSeen[] = rows.map((row) => ({
      key: row.idem_key,
      number: String(row.number),
      state: row.state,
      reason: row.reason,
    }));
    const check = checkGaplessAnswers(clients.answers, seen, clients.intents);
    const cli = await verifyByCli(server.url);
    const answers = clients.answers;
    const byPhase = phases.map(({ name, from, to }) => [
      name,
      tally(answers.filter((a) => a.invokeMs >= from && a.invokeMs < to)),
    ]);
    // A void that met the sweep first answers the number voided `expired`.
    const voidsFoundExpired = answers.filter((a) => a.call === 'void' && a.reason === 'expired');
    Object.assign(facts, {
      answers: Object.fromEntries(byPhase),
      voidsFoundExpired: voidsFoundExpired.length,
      settledMs,
    });
    console.log(
      `[system] gapless faults on ${engine} (${size}): ${check.keys} keys, ${check.repeatAnswers} repeated answers, ` +
        `${clients.answers.length} answers; verify ${JSON.stringify(report)}; check ${JSON.stringify(
          Object.fromEntries(
            Object.entries(check).map(([k, v]) => [k, Array.isArray(v) ? v.slice(0, 5) : v]),
          ),
        )}; ${JSON.stringify(facts, bigintJson)}`,
    );
    await Promise.all(cluster.instances.map((instance) => instance.stop()));
    return { engine, check, report, cli, settledMs, answers: clients.answers, facts };
  } finally {
    await clients?.stop();
    await cluster.dispose();
    for (const { proxy } of proxies) await proxy.stop();
  }
}

/** `leaf numbers verify inv --json` against the server (not through a proxy). */
async function verifyByCli(url: string): Promise<GaplessFaultsResult['cli']> {
  let out = '';
  const code = await runCli(['numbers', 'verify', SERIES, '--json'], {
    env: { LEAF_DB_URL: url },
    out: (text) => (out += `${text}\n`),
    err: () => undefined,
  });
  return { code, report: JSON.parse(out) as Record<string, unknown> };
}

/** Answers by call, status and code: `reserve 200`, `confirm 503 LEAF_GAPLESS_BUSY`... */
function tally(answers: readonly GaplessAnswer[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const a of answers) {
    const label = `${a.call} ${a.status ?? '-'}${a.status === 200 ? '' : ` ${a.error}`}`;
    counts[label] = (counts[label] ?? 0) + 1;
  }
  return counts;
}

/** The claims of the proof (docs/gapless.md). */
export function expectGaplessProof(result: GaplessFaultsResult): void {
  const { check, report, cli } = result;
  expect(report).toMatchObject({
    pending: 0,
    missing: [],
    duplicates: [],
    voidsWithoutReason: [],
    unrecorded: [],
    ok: true,
  });
  expect(report.chainBrokenAt).toBeUndefined();
  expect(report.records).toBe(report.issued);
  expect(cli).toEqual({ code: 0, report });
  expect(check.wrongNumbers).toEqual([]);
  expect(check.sharedNumbers).toEqual([]);
  expect(check.notStored).toEqual([]);
  expect(check.wrongStates).toEqual([]);
  expect(check.outOfOrder).toEqual([]);
  expect(check.untyped).toEqual([]);
  expect(result.settledMs).not.toBeNull();
  expect(result.settledMs!).toBeLessThanOrEqual(SETTLE_BOUND_MS);
  // The run exercised what it claims: keys answered, retries answered, the faults seen.
  expect(check.keys).toBeGreaterThan(200);
  expect(check.repeatAnswers).toBeGreaterThan(50);
  const retriedElsewhere = result.answers.filter(
    (a) => a.attempt > 1 && a.status === 200 && a.call === 'reserve',
  );
  expect(retriedElsewhere.length).toBeGreaterThan(0);
  expect(result.answers.some((a) => a.error === 'TIMEOUT')).toBe(true);
}
