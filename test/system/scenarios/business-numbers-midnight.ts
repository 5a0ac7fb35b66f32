/**
 * Business numbers across a midnight of the **database's** clock (docs/formats.md, "Business numbers",
 * docs/design.md "Business numbers"): a private PostgreSQL whose clock libfaketime sets a little
 * before midnight in Asia/Shanghai, hours away from the real time the application instances
 * keep; three instances started as a deployer does (environment only, formats defined with the
 * CLI) serve a daily segment format and a daily sequence format under load, while instances are
 * killed (kill -9) and restarted before, across and after the boundary. Every number is
 * recorded and checked: unique; two days only, each counter starting at 1 in a row of its own
 * (the counter restarts exactly once); within an instance (segment) and across the cluster
 * (sequence) in real-time order; and no number of the old day handed out after any number of
 * the new one was.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, realpathSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { Client } from 'pg';
import { FaketimeClock } from '../../support/faketime';
import { buildIsFresh, runScript } from '../../support/app-process';
import { sleep } from '../../support/id-load';
import { checkUnique, type UniqueResult } from '../harness/checker';
import { Cluster } from '../harness/cluster';
import { History } from '../harness/history';
import { Load, type LoadRoute } from '../harness/load';
import { checkOrder, type OrderResult } from '../harness/order-checker';
import { PostgresServer } from '../harness/postgres-server';
import { sparePort } from '../harness/mariadb-server';
import { bigintJson, type ScenarioSize } from './scenario';

/** The zone whose midnight the run crosses: not UTC's, so the zone's calendar decides. */
export const ZONE = 'Asia/Shanghai';
const WIDTH = 6;
const SEQUENCE_LEASE_MS = 3000;

/** How long before and after midnight (database time) each size runs, and its faults. */
const PLANS: Record<
  ScenarioSize,
  {
    readonly beforeMs: number;
    readonly afterMs: number;
    /** Client loops per mode. */
    readonly concurrency: number;
    /** kill -9 at `atMs` from midnight (database time); restart after `downMs`. */
    readonly kills: ReadonlyArray<{ instance: number; atMs: number; downMs: number }>;
  }
> = {
  ci: {
    beforeMs: 14_000,
    afterMs: 10_000,
    concurrency: 3,
    kills: [
      { instance: 0, atMs: -9_000, downMs: 0 },
      { instance: 1, atMs: -1_500, downMs: 2_000 },
      { instance: 2, atMs: 3_000, downMs: 0 },
    ],
  },
  full: {
    beforeMs: 45_000,
    afterMs: 40_000,
    concurrency: 6,
    kills: [
      { instance: 0, atMs: -30_000, downMs: 0 },
      { instance: 1, atMs: -10_000, downMs: 1_000 },
      { instance: 2, atMs: -1_000, downMs: 3_000 },
      { instance: 0, atMs: -200, downMs: 0 },
      { instance: 1, atMs: 2_000, downMs: 0 },
      { instance: 2, atMs: 15_000, downMs: 2_000 },
    ],
  },
};

/** What a run found. */
export interface MidnightResult {
  readonly unique: UniqueResult;
  /** Per instance (segment) and across the cluster (sequence): the real-time order. */
  readonly segmentOrder: OrderResult[];
  readonly sequenceOrder: OrderResult;
  /** The dates every number carried, with how many numbers and their counters' range. */
  readonly days: Record<string, { numbers: number; minCounter: number; maxCounter: number }>;
  /** The period rows `leaf_alloc` holds after the run, per tag. */
  readonly counterRows: Record<string, string[]>;
  /** Old-day numbers whose call began after a new-day number had come back (must be 0). */
  readonly acrossBoundary: number;
  /** The dates the database's midnight separates. */
  readonly before: string;
  readonly after: string;
  /** The database's clock minus the instances' (ms). */
  readonly offsetMs: number;
  /** Numbers served by each instance after each of its restarts, in order. */
  readonly servedAfterRestart: Record<string, number[]>;
  /** The module `nestjs-leaf` resolves to for the built application. */
  readonly library: string;
  readonly facts: Record<string, unknown>;
}

/** The date `ms` has in {@link ZONE}, `yyyyMMdd`. */
export function dateIn(ms: number): string {
  const parts = new Intl.DateTimeFormat('en-CA', {
    timeZone: ZONE,
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
  }).formatToParts(ms);
  const part = (type: string) => parts.find((p) => p.type === type)!.value;
  return `${part('year')}${part('month')}${part('day')}`;
}

/** The first midnight in {@link ZONE} at least `afterMs` from now (minute-granular search). */
function midnightAfter(afterMs: number): number {
  let at = Date.now() + afterMs;
  at -= at % 60_000;
  const today = dateIn(at);
  while (dateIn(at) === today) at += 60_000;
  return at;
}

/**
 * A business number as the checkers take it: `PREFIX-yyyyMMdd-counter` → the bigint
 * `yyyyMMdd·10^WIDTH + counter`, unique exactly when the number is, and ordered as (day,
 * counter).
 */
function numberRoute(
  mode: 'segment' | 'sequence',
  tag: string,
  prefix: string,
  count?: number,
): LoadRoute {
  const pattern = new RegExp(`^${prefix}-(\\d{8})-(\\d{${WIDTH}})$`);
  const value = (text: string): bigint => {
    const match = pattern.exec(text);
    if (!match) throw new Error(`not a number of ${tag}: ${JSON.stringify(text)}`);
    return BigInt(match[1]!) * 10n ** BigInt(WIDTH) + BigInt(match[2]!);
  };
  return count === undefined
    ? {
        name: `${mode}/number`,
        key: tag,
        path: `/api/${mode}/number/${tag}`,
        parse: (body) => [value(body)],
      }
    : {
        name: `${mode}/numbers`,
        key: tag,
        path: `/api/${mode}/numbers/${tag}?count=${count}`,
        parse: (body) => (JSON.parse(body) as { numbers: string[] }).numbers.map(value),
      };
}

const dayOf = (id: bigint) => (id / 10n ** BigInt(WIDTH)).toString();
const counterOf = (id: bigint) => Number(id % 10n ** BigInt(WIDTH));

/** Runs the scenario; see the file. */
export async function midnightScenario(size: ScenarioSize): Promise<MidnightResult> {
  const plan = PLANS[size];
  const library = resolvedLibrary();
  const clock = new FaketimeClock(0);
  // The postgres user reads libfaketime's offset file.
  chmodSync(dirname(clock.env().FAKETIME_TIMESTAMP_FILE!), 0o755);
  const server = await PostgresServer.start({ env: clock.env() });
  let cluster: Cluster | null = null;
  try {
    // The database's clock: hours from the real one, `beforeMs` + the start-up before midnight.
    const startupMs = 25_000;
    const midnightDb = midnightAfter(3 * 3_600_000);
    const offsetMs = Math.round(midnightDb - (plan.beforeMs + startupMs) - Date.now());
    clock.set(offsetMs);
    const realOf = (databaseMs: number) => databaseMs - offsetMs;
    await databaseClockFaked(server.url, offsetMs);

    const cliEnv = { ...baseEnv(), LEAF_DB_URL: server.url };
    for (const args of [
      ['tags', 'create', 'orders', '--step', '20'],
      ['tags', 'create', 'ledger', '--step', '20'],
      [
        'formats',
        'create',
        'orders',
        '--prefix',
        'ORD',
        '--date-pattern',
        'yyyyMMdd',
        '--time-zone',
        ZONE,
        '--width',
        String(WIDTH),
      ],
      [
        'formats',
        'create',
        'ledger',
        '--mode',
        'sequence',
        '--prefix',
        'LED',
        '--date-pattern',
        'yyyyMMdd',
        '--time-zone',
        ZONE,
        '--width',
        String(WIDTH),
      ],
    ]) {
      const run = await runScript('src/cli.ts', args, {
        env: cliEnv,
        timeoutMs: 60_000,
        preferBuild: true,
      });
      if (run.code !== 0) throw new Error(`leaf ${args.join(' ')}: ${run.stderr}`);
    }

    const ports = [await sparePort(), await sparePort(), await sparePort()];
    const namespace = `bn${Date.now().toString(36)}`;
    cluster = await Cluster.start({
      size: 3,
      defaults: 'deployer',
      env: (_name, index) => ({
        PORT: String(ports[index]),
        HOST: '127.0.0.1',
        LEAF_DB_URL: server.url,
        LEAF_NAME: namespace,
        LEAF_SNOWFLAKE_ENABLED: 'false',
        LEAF_SEQUENCE_ENABLED: 'true',
        LEAF_SEQUENCE_ADVERTISE: `http://127.0.0.1:${ports[index]}`,
        LEAF_SEQUENCE_GROUPS: '1',
        LEAF_SEQUENCE_LEASE_MS: String(SEQUENCE_LEASE_MS),
        LEAF_SEQUENCE_LEASE_MARGIN_MS: '1000',
        LEAF_SEQUENCE_HEARTBEAT_MS: '200',
      }),
    });
    const loadStart = realOf(midnightDb - plan.beforeMs);
    if (Date.now() > loadStart) {
      throw new Error(`the instances took too long to start (${Date.now() - loadStart} ms late)`);
    }
    await sleep(loadStart - Date.now());

    const history = new History();
    // One load per mode: a segment call never waits behind a sequence call that waits for a
    // new issuer (a killed issuer's lease), so each tag's pause at midnight is its own.
    const loads = [
      [numberRoute('segment', 'orders', 'ORD'), numberRoute('segment', 'orders', 'ORD', 5)],
      [numberRoute('sequence', 'ledger', 'LED'), numberRoute('sequence', 'ledger', 'LED', 3)],
    ].map((routes) =>
      Load.start({
        targets: cluster!.instances,
        routes,
        history,
        concurrency: plan.concurrency,
        durationMs: plan.beforeMs + plan.afterMs,
        pauseMs: 5,
      }),
    );
    const restarts: Record<string, number[]> = {};
    const faults: string[] = [];
    for (const kill of plan.kills) {
      await sleep(Math.max(0, realOf(midnightDb + kill.atMs) - Date.now()));
      const instance = cluster.instances[kill.instance]!;
      await instance.kill();
      faults.push(
        `kill -9 ${instance.name} at midnight${kill.atMs >= 0 ? '+' : ''}${kill.atMs} ms`,
      );
      if (kill.downMs > 0) await sleep(kill.downMs);
      await instance.start();
      (restarts[instance.name] ??= []).push(Date.now());
    }
    const summary = await Promise.all(loads.map((load) => load.finished));

    const servedAfterRestart: Record<string, number[]> = {};
    for (const [name, times] of Object.entries(restarts)) {
      servedAfterRestart[name] = times.map(
        (at, i) =>
          history.operations.filter(
            (op) =>
              op.process === name &&
              op.type === 'ok' &&
              op.invokeMs >= at &&
              (i + 1 >= times.length || op.invokeMs < times[i + 1]!),
          ).length,
      );
    }
    const segmentOps = history.operations.filter((op) => op.route.startsWith('segment/'));
    const segmentOrder = cluster.instances.map((instance) =>
      checkOrder(History.of(...segmentOps.filter((op) => op.process === instance.name))),
    );
    const sequenceOrder = checkOrder(
      History.of(...history.operations.filter((op) => op.route.startsWith('sequence/'))),
    );

    const before = dateIn(midnightDb - 1);
    const after = dateIn(midnightDb);
    const days: MidnightResult['days'] = {};
    let lastOldInvoke = -Infinity;
    let firstNewComplete = Infinity;
    let acrossBoundary = 0;
    for (const op of history.operations) {
      if (op.type !== 'ok') continue;
      for (const id of op.ids) {
        const key = `${op.key}:${dayOf(id)}`;
        const day = (days[key] ??= { numbers: 0, minCounter: Infinity, maxCounter: 0 });
        day.numbers++;
        day.minCounter = Math.min(day.minCounter, counterOf(id));
        day.maxCounter = Math.max(day.maxCounter, counterOf(id));
      }
      const old = op.ids.some((id) => dayOf(id) === before);
      const young = op.ids.some((id) => dayOf(id) !== before);
      if (old) lastOldInvoke = Math.max(lastOldInvoke, op.invokeMs);
      if (young) firstNewComplete = Math.min(firstNewComplete, op.completeMs);
    }
    for (const op of history.operations) {
      if (
        op.type === 'ok' &&
        op.ids.some((id) => dayOf(id) === before) &&
        op.invokeMs > firstNewComplete
      ) {
        acrossBoundary++;
      }
    }
    // Around midnight, per tag (ms from the database's midnight, in real time): the last call
    // that returned an old-day number began, the first new-day number came back.
    const realMidnight = realOf(midnightDb);
    const boundary: Record<string, { lastOldInvoke: number; firstNewComplete: number }> = {};
    for (const op of history.operations) {
      if (op.type !== 'ok') continue;
      const entry = (boundary[op.key ?? ''] ??= {
        lastOldInvoke: -Infinity,
        firstNewComplete: Infinity,
      });
      if (op.ids.some((id) => dayOf(id) === before)) {
        entry.lastOldInvoke = Math.max(entry.lastOldInvoke, op.invokeMs - realMidnight);
      } else {
        entry.firstNewComplete = Math.min(entry.firstNewComplete, op.completeMs - realMidnight);
      }
    }
    const counterRows = await periodRows(server.url);
    const unique = checkUnique(history);
    const facts = {
      load: summary,
      faults,
      boundary,
      errors: errorsOf(history),
      midnightDb: new Date(midnightDb).toISOString(),
    };
    console.log(
      `[system] business-numbers-midnight (${size}): database clock ${Math.round(offsetMs / 60_000)} min off the instances', ` +
        `${unique.ids} numbers, ${unique.duplicateCount} duplicates; days ${JSON.stringify(days)}; ` +
        `rows ${JSON.stringify(counterRows)}; across the boundary ${acrossBoundary}; ` +
        `segment order violations ${segmentOrder.map((o) => o.violationCount).join('/')}, sequence ${sequenceOrder.violationCount} ` +
        `(${sequenceOrder.pairsChecked} pairs); served after restarts ${JSON.stringify(servedAfterRestart)}; ` +
        `nestjs-leaf from ${library}; ${JSON.stringify(facts, bigintJson)}`,
    );
    return {
      unique,
      segmentOrder,
      sequenceOrder,
      days,
      counterRows,
      acrossBoundary,
      before,
      after,
      offsetMs,
      servedAfterRestart,
      library,
      facts,
    };
  } finally {
    await cluster?.dispose();
    await server.dispose();
    clock.dispose();
  }
}

/** The errors answered, by status and code. */
function errorsOf(history: History): Record<string, number> {
  const errors: Record<string, number> = {};
  for (const op of history.operations) {
    if (op.type === 'ok') continue;
    const label = `${op.status ?? '-'} ${op.error ?? ''}`;
    errors[label] = (errors[label] ?? 0) + 1;
  }
  return errors;
}

/** The process environment without the runner's `LEAF_*`, `PORT`, `HOST`, `NODE_ENV`. */
function baseEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (value !== undefined && !/^(LEAF_|PORT$|HOST$|NODE_ENV$)/.test(name)) env[name] = value;
  }
  return env;
}

async function withClient<T>(url: string, work: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/** The database's clock, epoch ms. */
function databaseNow(url: string): Promise<number> {
  return withClient(url, async (client) => {
    const { rows } = await client.query<{ now: string }>(
      'SELECT CAST(CAST(EXTRACT(EPOCH FROM clock_timestamp()) * 1000 AS bigint) AS text) AS now',
    );
    return Number(rows[0]!.now);
  });
}

/**
 * Waits until the database's clock shows `offsetMs` (libfaketime re-reads its file at most a
 * second old, a process that has not asked for the time since then later).
 * @throws when it does not within 15 s.
 */
async function databaseClockFaked(url: string, offsetMs: number): Promise<void> {
  const until = Date.now() + 15_000;
  for (;;) {
    const seen = await databaseNow(url);
    if (Math.abs(seen - (Date.now() + offsetMs)) < 1000) return;
    if (Date.now() > until) {
      throw new Error(`the database's clock is not faked: ${new Date(seen).toISOString()}`);
    }
    await sleep(250);
  }
}

/** The period rows of `orders` and `ledger` in `leaf_alloc`. */
function periodRows(url: string): Promise<Record<string, string[]>> {
  return withClient(url, async (client) => {
    const { rows } = await client.query<{ biz_tag: string }>(
      "SELECT biz_tag FROM leaf_alloc WHERE biz_tag LIKE '%:%' ORDER BY biz_tag",
    );
    const byTag: Record<string, string[]> = {};
    for (const { biz_tag: tag } of rows) (byTag[tag.split(':')[0]!] ??= []).push(tag);
    return byTag;
  });
}

/**
 * Where the application the cluster runs finds `nestjs-leaf`: with a fresh build, Node's own
 * resolution from dist/src, which must be this checkout's library (a checkout whose
 * node_modules links to another one's needs `dist/node_modules/nestjs-leaf`); else ts-node on
 * the sources, through tsconfig's paths.
 * @throws when the build would load another checkout's library.
 */
function resolvedLibrary(): string {
  const root = join(__dirname, '..', '..', '..');
  if (!buildIsFresh()) return 'libs/leaf/src (ts-node)';
  const resolved = execFileSync(
    process.execPath,
    [
      '-p',
      `require.resolve('nestjs-leaf/numbers', { paths: [${JSON.stringify(join(root, 'dist', 'src'))}] })`,
    ],
    { encoding: 'utf8' },
  ).trim();
  if (!realpathSync(resolved).startsWith(realpathSync(root))) {
    throw new Error(`the built application would load another checkout's nestjs-leaf: ${resolved}`);
  }
  return resolved;
}

/** What every run must show; see the file. */
export function expectMidnightSafe(result: MidnightResult): void {
  // Every number unique, per tag.
  expect(result.unique.duplicates).toEqual([]);
  expect(result.unique.valid).toBe(true);
  // In order: within each instance (segment), across the cluster (sequence), days included.
  for (const order of [...result.segmentOrder, result.sequenceOrder]) {
    expect(order.violations).toEqual([]);
    expect(order.duplicateCount).toBe(0);
    expect(order.unorderedAnswers).toBe(0);
  }
  expect(result.sequenceOrder.calls).toBeGreaterThan(50);
  // Two days only; each day's counter starts at 1, in a row of its own: one restart.
  const { before, after } = result;
  expect(Object.keys(result.days).sort()).toEqual(
    [`ledger:${before}`, `ledger:${after}`, `orders:${before}`, `orders:${after}`].sort(),
  );
  for (const day of Object.values(result.days)) {
    expect(day.minCounter).toBe(1);
    expect(day.numbers).toBeGreaterThan(20);
  }
  expect(result.counterRows).toEqual({
    ledger: [`ledger:${before}`, `ledger:${after}`],
    orders: [`orders:${before}`, `orders:${after}`],
  });
  // No number of the old day came out after one of the new day had.
  expect(result.acrossBoundary).toBe(0);
  // The database's clock decided, hours away from the instances'.
  expect(Math.abs(result.offsetMs)).toBeGreaterThan(3_000_000);
  // Every restarted instance served again.
  for (const served of Object.values(result.servedAfterRestart)) {
    for (const count of served) expect(count).toBeGreaterThan(0);
  }
}
