/**
 * What the client-token check costs per request (`npm run bench -- --only client-tokens`; a
 * module of `npm run bench`; docs/security.md, "Callers"): the application with
 * `LEAF_CLIENT_TOKENS` (a dozen clients; the caller's token allowed every mode on `leaf-*`, a
 * pattern, with a quota far above the load, so the token lookup, the scope and the bucket all
 * run on every request) against the same build without it (no check at all), two fresh processes on
 * the same core, loaded in alternating order round after round with the same requests — the
 * `Authorization` header goes to both. Per round the throughput ratio (with ÷ without) and the
 * CPU-time ratio per request (without ÷ with, from `/proc`); each row gives the median of the
 * per-round throughput ratios with its 95 % interval, and the CPU ratio's median.
 * Goals: ≥ 97 % on the single-ID route, ≥ 99 % on batches of 1,000 (`ids?count=1000`), met
 * on the median (on a shared machine the interval is wider than the cost measured).
 */
import { createHash } from 'node:crypto';
import type { FastifyInstance, RouteOptions, onRequestHookHandler } from 'fastify';
import { LeafServer, ensureBuilt } from './support/leaf-server';
import {
  load,
  loadWithCpu,
  pinLoadGenerator,
  pinnedServerCpu,
  ratioCell,
  whilePinned,
} from './support/http-load';
import {
  fmt,
  median,
  medianInterval,
  type BenchContext,
  type BenchModule,
  type BenchRow,
} from './support/report';
import { runAlone } from './support/run';
import { bearerToken } from '../src/admin/admin-token';
import { installClientTokenCheck } from '../src/clients/client-token.hook';
import { CLIENT_ROUTE_CONFIG } from '../src/clients/client-route.decorator';
import { ClientAccess } from '../src/clients/client-access';
import { parseClientDefinitions } from '../src/clients/client-definitions';

/**
 * CPU µs per call of `check(header)` with a header string new to V8 on every call, as each HTTP
 * request's is (a string reused in a loop keeps its hash and skews a lookup by it): headers are
 * made a thousand at a time, and the cost of making them, measured alone, is taken off.
 */
function perFreshHeaderUs(calls: number, check: (header: string) => void): number {
  const chunk = 1000;
  const fresh = (): string[] =>
    Array.from({ length: chunk }, () => Buffer.from(HEADERS.authorization).toString('latin1'));
  const run = (n: number, call: (header: string) => void): number => {
    const before = process.cpuUsage();
    for (let done = 0; done < n; done += chunk) for (const header of fresh()) call(header);
    const spent = process.cpuUsage(before);
    return (spent.user + spent.system) / n;
  };
  let sink = 0;
  const making = (header: string) => void (sink += header.length);
  run(Math.min(calls, 50_000), check); // warm-up
  run(Math.min(calls, 50_000), making);
  const withCheck = run(calls, check);
  const alone = run(calls, making);
  if (sink < 0) console.log(sink);
  return Math.max(0, withCheck - alone);
}

/**
 * The check alone, in this process: CPU microseconds per `bearerToken` + `ClientAccess.admit`
 * (the remembered token — its SHA-256 on the first call only —, mode, pattern and bucket),
 * over `calls` calls, each with a header new to V8.
 */
function checkCpuUs(calls: number): number {
  const { clients } = parseClientDefinitions(JSON.stringify(CLIENTS), 'bench');
  const access = new ClientAccess(clients);
  return perFreshHeaderUs(calls, (header) => {
    access.admit(bearerToken(header), 'segment', 'leaf-segment-test', 1);
  });
}

const TOKEN = 'bench-client-token-0123456789abcdef';
const HEADERS = { authorization: `Bearer ${TOKEN}` };
const sha256 = (token: string) => createHash('sha256').update(token).digest('hex');

/** A dozen clients, the benchmark's one among them. */
const CLIENTS = [
  ...Array.from({ length: 11 }, (_, i) => ({
    name: `other-${i}`,
    sha256: sha256(`other-client-token-${i}-0123456789`),
    modes: ['segment'],
    tags: [`team-${i}-*`],
    idsPerSecond: 10_000,
  })),
  {
    name: 'bench',
    sha256: sha256(TOKEN),
    modes: ['*'],
    tags: ['orders', 'leaf-*'],
    idsPerSecond: 1_000_000_000,
    burst: 1_000_000_000,
  },
];

const ROUTES = [
  {
    label: '`GET /api/segment/get/{key}` (single ID)',
    path: '/api/segment/get/leaf-segment-test',
    goal: 0.97,
    connections: (c: number) => c,
  },
  {
    label: '`GET /api/segment/ids/{key}?count=1000` (batches of 1,000)',
    path: '/api/segment/ids/leaf-segment-test?count=1000',
    goal: 0.99,
    connections: () => 10,
  },
] as const;

/**
 * The check as the application runs it on every request, in CPU µs per call: the route's
 * Fastify `onRequest` hook as `installClientTokenCheck` builds it from the single-ID route's
 * `@ClientRoute` scope (token, tag parameter, cost, scope and quota, the remembered token),
 * called as Fastify calls it — everything a route without client tokens does not do. In
 * process, so other work on the machine moves it far less than an HTTP figure.
 */
function hookPathCpuUs(calls: number): number {
  const { clients } = parseClientDefinitions(JSON.stringify(CLIENTS), 'bench');
  let hook: onRequestHookHandler | undefined;
  const fastify = {
    addHook(name: string, onRoute: (route: RouteOptions) => void) {
      if (name !== 'onRoute') return;
      const route = {
        method: 'GET',
        url: '/api/segment/get/:key',
        config: { [CLIENT_ROUTE_CONFIG]: { mode: 'segment', tagParam: 'key', cost: 'one' } },
      } as unknown as RouteOptions;
      onRoute(route);
      hook = (route.onRequest as onRequestHookHandler[])[0];
    },
  } as unknown as FastifyInstance;
  installClientTokenCheck(fastify, new ClientAccess(clients));
  if (hook === undefined) throw new Error('no hook installed');
  const check = hook;
  let refused = 0;
  const done = (error?: Error) => void (error === undefined || refused++);
  const us = perFreshHeaderUs(calls, (authorization) => {
    const request = {
      headers: { authorization },
      params: { key: 'leaf-segment-test' },
      query: {},
    };
    void check.call(fastify, request as never, {} as never, done as never);
  });
  if (refused > 0) throw new Error('refused');
  return us;
}

/** The HTTP rows, and the single-ID route's server CPU per request without tokens (µs). */
async function httpRows(context: BenchContext): Promise<{ rows: BenchRow[]; singleCpuUs: number }> {
  ensureBuilt(context.log);
  context.log(`client tokens: ${pinLoadGenerator()}`);
  const cpu = pinnedServerCpu();
  const [plain, guarded] = await Promise.all([
    LeafServer.start('without client tokens', {}, { cpu }),
    LeafServer.start(
      'LEAF_CLIENT_TOKENS',
      { LEAF_CLIENT_TOKENS: JSON.stringify(CLIENTS) },
      { cpu },
    ),
  ]);
  try {
    const targets = [
      { who: 'without', port: plain.port, pid: plain.pid },
      { who: 'with', port: guarded.port, pid: guarded.pid },
    ] as const;
    const rows: BenchRow[] = [];
    let singleCpuUs = NaN;
    for (const route of ROUTES) {
      const connections = route.connections(context.connections);
      const rps = { without: [] as number[], with: [] as number[] };
      const cpuUs = { without: [] as number[], with: [] as number[] };
      await whilePinned(async () => {
        if (!context.quick) {
          for (const t of targets) {
            await load(`http://127.0.0.1:${t.port}${route.path}`, {
              durationSec: 2,
              connections,
              headers: HEADERS,
            });
          }
        }
        for (let round = 0; round < context.rounds; round++) {
          const order = round % 2 === 0 ? targets : [...targets].reverse();
          for (const t of order) {
            const measured = await loadWithCpu(`http://127.0.0.1:${t.port}${route.path}`, t.pid, {
              durationSec: context.roundSeconds,
              connections,
              headers: HEADERS,
            });
            if (measured.run.errors + measured.run.non2xx > 0) {
              throw new Error(`${t.who} tokens, GET ${route.path}: errors or non-2xx answers`);
            }
            rps[t.who].push(measured.run.requestsPerSec);
            cpuUs[t.who].push(measured.cpuUsPerRequest);
          }
        }
      });
      const ratios = rps.with.map((value, i) => value / rps.without[i]);
      const cpuRatios = cpuUs.with
        .map((us, i) => cpuUs.without[i] / us)
        .filter((value) => Number.isFinite(value));
      const cpuCell =
        cpuRatios.length === 0
          ? ''
          : `; server CPU per request ${median(cpuUs.with).toFixed(1)} µs, without ${median(cpuUs.without).toFixed(1)} µs (without ÷ with ${ratioCell(cpuRatios)})`;
      context.log(
        `client tokens, GET ${route.path}: ${context.rounds} rounds of ${context.roundSeconds} s, ` +
          `${connections} connections; with ${fmt(median(rps.with))}, without ` +
          `${fmt(median(rps.without))} req/s; throughput ${ratioCell(ratios)}${cpuCell}`,
      );
      if (route === ROUTES[0]) singleCpuUs = median(cpuUs.without);
      rows.push({
        measurement: `${route.label} with a client token checked (\`LEAF_CLIENT_TOKENS\`, pattern and quota), ${connections} connections`,
        figure: `${fmt(median(rps.with))} req/s${cpuCell}`,
        baseline: `the same build without client tokens: ${fmt(median(rps.without))} req/s`,
        ratio: ratioCell(ratios),
        target: `≥ ${(route.goal * 100).toFixed(0)} %`,
        met: medianInterval(ratios).median >= route.goal,
      });
    }
    return { rows, singleCpuUs };
  } finally {
    await Promise.all([plain.stop(), guarded.stop()]);
  }
}

/** A row of CPU µs per request in process, against the HTTP single-ID request's CPU. */
function shareRow(
  measurement: string,
  us: number,
  requestUs: number,
  target: number | null,
): BenchRow {
  const known = Number.isFinite(requestUs);
  return {
    measurement,
    figure: `${us.toFixed(2)} µs CPU per request`,
    baseline: known
      ? `a single-ID request's server CPU without tokens: ${requestUs.toFixed(1)} µs`
      : '—',
    ratio: known ? `**${((us / requestUs) * 100).toFixed(1)} %** of it` : '—',
    target: target === null ? '—' : `≤ ${(target * 100).toFixed(0)} %`,
    met: target === null || !known ? null : us / requestUs <= target,
  };
}

export const bench: BenchModule = {
  name: 'client-tokens',
  title: 'Client tokens',
  async run(context): Promise<BenchRow[]> {
    const http = context.skipHttp ? { rows: [], singleCpuUs: NaN } : await httpRows(context);
    const calls = context.quick ? 100_000 : 1_000_000;
    const hookUs = hookPathCpuUs(calls);
    const checkUs = checkCpuUs(calls);
    context.log(
      `client tokens in process: the route's hook as Fastify runs it ${hookUs.toFixed(2)} µs, the check alone ${checkUs.toFixed(2)} µs CPU per request`,
    );
    return [
      ...http.rows,
      shareRow(
        "the check as the application runs it, in process (the route's `onRequest` hook: token, tag, cost, scope, quota)",
        hookUs,
        http.singleCpuUs,
        0.03,
      ),
      shareRow(
        'of which the check alone (`bearerToken` + `ClientAccess.admit`: the remembered token, mode, pattern, bucket)',
        checkUs,
        http.singleCpuUs,
        null,
      ),
    ];
  },
};

if (require.main === module) runAlone(bench);
