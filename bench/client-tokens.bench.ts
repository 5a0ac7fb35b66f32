/**
 * What the client-token check costs per request (`npm run bench -- --only client-tokens`; a
 * module of `npm run bench`; docs/security.md, "Callers"): the application with
 * `LEAF_CLIENT_TOKENS` (a dozen clients; the caller's token allowed every mode on `leaf-*`, a
 * pattern, with a quota far above the load, so the hash, the scope and the bucket all run on
 * every request) against the same build without it (no guard at all), two fresh processes on
 * the same core, loaded in alternating order round after round with the same requests — the
 * `Authorization` header goes to both. Per round the throughput ratio (with ÷ without) and the
 * CPU-time ratio per request (without ÷ with, from `/proc`); each row gives the median of the
 * per-round throughput ratios with its 95 % interval, and the CPU ratio's median.
 * Goals: ≥ 97 % on the single-ID route, ≥ 99 % on batches of 1,000 (`ids?count=1000`), met
 * on the median (on a shared machine the interval is wider than the cost measured).
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { LeafServer, ensureBuilt } from './support/leaf-server';
import {
  load,
  loadWithCpu,
  pinLoadGenerator,
  pinnedServerCpu,
  ratioCell,
  whilePinned,
} from './support/http-load';
import { fmt, median, medianInterval, type BenchModule, type BenchRow } from './support/report';
import { runAlone } from './support/run';
import { bearerToken } from '../src/admin/admin-token';
import { createApp } from '../src/bootstrap';
import { loadAppConfig } from '../src/config/app-config';
import { ClientAccess } from '../src/clients/client-access';
import { parseClientDefinitions } from '../src/clients/client-definitions';

/**
 * The check alone, in this process: CPU microseconds per `bearerToken` + `ClientAccess.admit`
 * (SHA-256 of the token, the Map lookup, mode, pattern and bucket), over `calls` calls.
 */
function checkCpuUs(calls: number): number {
  const { clients } = parseClientDefinitions(JSON.stringify(CLIENTS), 'bench');
  const access = new ClientAccess(clients);
  const header = HEADERS.authorization;
  let sink = 0;
  const run = (n: number) => {
    for (let i = 0; i < n; i++) {
      sink += access.admit(bearerToken(header), 'segment', 'leaf-segment-test', 1).name.length;
    }
  };
  run(Math.min(calls, 50_000)); // warm-up
  const before = process.cpuUsage();
  run(calls);
  const spent = process.cpuUsage(before);
  if (sink < 0) console.log(sink);
  return (spent.user + spent.system) / calls;
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

/** An application in this process on a SQLite file of its own (segment mode only). */
async function inProcessApp(
  dir: string,
  env: Record<string, string>,
): Promise<NestFastifyApplication> {
  const app = await createApp(
    loadAppConfig({
      LEAF_DB_URL: `sqlite:${join(dir, `${Object.keys(env).length}.sqlite`)}`,
      LEAF_DB_MIGRATE: 'true',
      LEAF_SNOWFLAKE_ENABLED: 'false',
      LEAF_STATE_DIR: dir,
      ...env,
    }),
    { logger: false },
  );
  await app.init();
  await app.getHttpAdapter().getInstance().ready();
  return app;
}

/**
 * The whole check as Nest runs it — the global guard, its context, the metadata, the token —
 * in CPU µs per request: the single-ID route through Fastify's `inject` in this process, the
 * application with and without client tokens interleaved chunk by chunk (alternating which goes
 * first), per round the CPU time per request of each. `inject` itself costs more than a socket,
 * so the ratio understates the share; the difference is the check's cost.
 */
async function throughNest(
  rounds: number,
  chunk: number,
): Promise<{ without: number[]; with: number[] }> {
  const dir = mkdtempSync(join(tmpdir(), 'leaf-bench-tokens-'));
  const apps: NestFastifyApplication[] = [];
  try {
    apps.push(await inProcessApp(dir, {}));
    apps.push(await inProcessApp(dir, { LEAF_CLIENT_TOKENS: JSON.stringify(CLIENTS) }));
    const request = {
      method: 'GET' as const,
      url: '/api/segment/get/leaf-segment-test',
      headers: HEADERS,
    };
    const cpuUsPerRequest = async (app: NestFastifyApplication): Promise<number> => {
      const fastify = app.getHttpAdapter().getInstance();
      const before = process.cpuUsage();
      for (let i = 0; i < chunk; i++) {
        const answer = await fastify.inject(request);
        if (answer.statusCode !== 200) throw new Error(`inject: HTTP ${answer.statusCode}`);
      }
      const spent = process.cpuUsage(before);
      return (spent.user + spent.system) / chunk;
    };
    for (const app of apps) await cpuUsPerRequest(app); // warm-up
    const result = { without: [] as number[], with: [] as number[] };
    for (let round = 0; round < rounds; round++) {
      const order = round % 2 === 0 ? [0, 1] : [1, 0];
      for (const i of order)
        (i === 0 ? result.without : result.with).push(await cpuUsPerRequest(apps[i]));
    }
    return result;
  } finally {
    await Promise.all(apps.map((app) => app.close()));
    rmSync(dir, { recursive: true, force: true });
  }
}

export const bench: BenchModule = {
  name: 'client-tokens',
  title: 'Client tokens',
  async run(context): Promise<BenchRow[]> {
    if (context.skipHttp) return [];
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
        const summary = medianInterval(ratios);
        rows.push({
          measurement: `${route.label} with a client token checked (\`LEAF_CLIENT_TOKENS\`, pattern and quota), ${connections} connections`,
          figure: `${fmt(median(rps.with))} req/s${cpuCell}`,
          baseline: `the same build without client tokens: ${fmt(median(rps.without))} req/s`,
          ratio: ratioCell(ratios),
          target: `≥ ${(route.goal * 100).toFixed(0)} %`,
          met: summary.median >= route.goal,
        });
      }
      const nest = await throughNest(context.quick ? 2 : 30, context.quick ? 500 : 3000);
      const extra = nest.with.map((us, i) => us - nest.without[i]);
      context.log(
        `client tokens through Nest (inject): with ${median(nest.with).toFixed(2)}, without ` +
          `${median(nest.without).toFixed(2)} µs CPU per request; extra per round ${extra.map((us) => us.toFixed(2)).join(' ')}`,
      );
      const extraSummary = medianInterval(extra);
      rows.push({
        measurement:
          'the check as Nest runs it (global guard, metadata, token, scope, quota): `GET /api/segment/get/{key}` through `inject`, in process, with tokens vs without',
        figure: `${extraSummary.median >= 0 ? '+' : ''}${extraSummary.median.toFixed(2)} µs CPU per request${
          extraSummary.low !== null && extraSummary.high !== null
            ? ` (95 % CI ${extraSummary.low.toFixed(2)}–${extraSummary.high.toFixed(2)})`
            : ''
        }`,
        baseline: `without tokens: ${median(nest.without).toFixed(2)} µs per \`inject\``,
        ratio: ratioCell(nest.without.map((us, i) => us / nest.with[i])),
        target: '—',
        met: null,
      });
      const checkUs = checkCpuUs(context.quick ? 100_000 : 1_000_000);
      context.log(`client tokens: the check alone ${checkUs.toFixed(2)} µs CPU per call`);
      rows.push({
        measurement:
          'the check alone, in process (`bearerToken` + `ClientAccess.admit`: SHA-256, lookup, mode, pattern, bucket)',
        figure: `${checkUs.toFixed(2)} µs CPU per request`,
        baseline: Number.isFinite(singleCpuUs)
          ? `a single-ID request's server CPU without tokens: ${singleCpuUs.toFixed(1)} µs`
          : '—',
        ratio: Number.isFinite(singleCpuUs)
          ? `**${((checkUs / singleCpuUs) * 100).toFixed(1)} %** of it`
          : '—',
        target: '≤ 3 %',
        met: Number.isFinite(singleCpuUs) ? checkUs / singleCpuUs <= 0.03 : null,
      });
      return rows;
    } finally {
      await Promise.all([plain.stop(), guarded.stop()]);
    }
  },
};

if (require.main === module) runAlone(bench);
