/**
 * Two builds of the application against each other (`npm run bench:compare -- <A> <B>
 * [path]`): what one change to the application costs or saves per request, measured the way
 * `npm run bench` measures the application against the bare route. `A` and `B` are the
 * `src/main.js` of two builds, each started as a deployer starts it (environment only, every
 * default) and pinned like the bench servers; a build copied inside this checkout
 * (`cp -r dist .builds/before` before `npm run build`) resolves the same `node_modules`.
 *
 * For each of `BENCH_PAIRS` fresh pairs of processes (a pair's JIT state and heap layout
 * move a ratio by a few points, so one pair is not enough): a warm-up of each, then
 * `BENCH_ROUNDS` paired rounds of `BENCH_ROUND_SECONDS`, the order alternating. Prints, per
 * pair and over all the rounds of every pair, the median of the per-round ratios B ÷ A of
 * throughput and A ÷ B of server CPU time per request, each with its 95 % interval
 * (docs/benchmarks.md, *What each row measures*). Above 100 %, B is the cheaper build.
 *
 * BENCH_PAIRS (3), BENCH_ROUNDS (30), BENCH_ROUND_SECONDS (1), BENCH_CONNECTIONS (50).
 */
import { resolve } from 'node:path';
import {
  load,
  loadWithCpu,
  pinLoadGenerator,
  pinnedServerCpu,
  ratioCell,
  whilePinned,
} from './support/http-load';
import { LeafServer, ensureBuilt } from './support/leaf-server';
import { median } from './support/report';

const PAIRS = Number(process.env.BENCH_PAIRS ?? 3);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 30);
const ROUND_SECONDS = Number(process.env.BENCH_ROUND_SECONDS ?? 1);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
const WARM_UP_SEC = 2;

const log = (line: string): void => void process.stderr.write(`${line}\n`);

/** One fresh pair: per-round requests per second and CPU µs per request of A and B. */
async function measurePair(
  mains: readonly [string, string],
  path: string,
  cpu: string | null,
): Promise<{ rps: number[][]; cpu: number[][] }> {
  const servers: LeafServer[] = [];
  try {
    for (const [i, main] of mains.entries()) {
      servers.push(await LeafServer.start(i === 0 ? 'A' : 'B', {}, { cpu, main }));
    }
    return await whilePinned(async () => {
      const urls = servers.map((s) => `http://127.0.0.1:${s.port}${path}`);
      for (const url of urls)
        await load(url, { durationSec: WARM_UP_SEC, connections: CONNECTIONS });
      const rps: number[][] = [[], []];
      const perRequest: number[][] = [[], []];
      for (let round = 0; round < ROUNDS; round++) {
        for (const i of round % 2 === 0 ? [0, 1] : [1, 0]) {
          const { run, cpuUsPerRequest } = await loadWithCpu(urls[i], servers[i].pid, {
            durationSec: ROUND_SECONDS,
            connections: CONNECTIONS,
          });
          if (run.errors + run.non2xx > 0) throw new Error(`${urls[i]}: errors or non-2xx answers`);
          rps[i].push(run.requestsPerSec);
          perRequest[i].push(cpuUsPerRequest);
        }
      }
      return { rps, cpu: perRequest };
    });
  } finally {
    await Promise.all(servers.map((s) => s.stop()));
  }
}

async function main(): Promise<void> {
  const [a, b, path = '/api/segment/get/leaf-segment-test'] = process.argv.slice(2);
  if (a === undefined || b === undefined) {
    throw new Error('usage: npm run bench:compare -- <A/src/main.js> <B/src/main.js> [path]');
  }
  if ([a, b].some((main) => resolve(main) === resolve('dist/src/main.js'))) ensureBuilt(log);
  const pinning = pinLoadGenerator();
  const cpu = pinnedServerCpu();
  log(
    `${pinning}; A ${a}, B ${b}, GET ${path}; ${PAIRS} fresh pairs × ${ROUNDS} rounds of ` +
      `${ROUND_SECONDS} s, ${CONNECTIONS} connections`,
  );
  const throughput: number[] = [];
  const cpuRatios: number[] = [];
  for (let pair = 1; pair <= PAIRS; pair++) {
    const figures = await measurePair([resolve(a), resolve(b)], path, cpu);
    const t = figures.rps[1].map((value, round) => value / figures.rps[0][round]);
    const c = figures.cpu[0]
      .map((value, round) => value / figures.cpu[1][round])
      .filter((value) => Number.isFinite(value));
    throughput.push(...t);
    cpuRatios.push(...c);
    log(
      `pair ${pair}: throughput B ÷ A ${ratioCell(t)}; CPU per request A ÷ B ${ratioCell(c)}; CPU medians ` +
        `A ${median(figures.cpu[0]).toFixed(2)} µs, B ${median(figures.cpu[1]).toFixed(2)} µs`,
    );
  }
  process.stdout.write(
    `all pairs: throughput B ÷ A ${ratioCell(throughput)}; CPU per request A ÷ B ${ratioCell(cpuRatios)}\n`,
  );
}

main().catch((error: unknown) => {
  log(String(error instanceof Error ? (error.stack ?? error.message) : error));
  process.exit(1);
});
