/**
 * Server CPU time per request of the application's single-ID routes against the bare Nest +
 * Fastify route, over several FRESH pairs of processes (`npm run bench:cpu`).
 *
 * `npm run bench` starts one bare server and one application for all its rounds, so what one
 * pair of processes happens to be (JIT decisions, heap layout) is in every round alike and its
 * confidence interval cannot show it. Here each pair is started anew, loaded in alternating
 * rounds with the same connections and length, and the CPU time each server used (user +
 * system, from `/proc`) is divided by the requests it answered: a figure that other work on
 * the cores moves far less than requests per second. Prints, per pair and route, the medians
 * and the ratio bare ÷ application (the throughput ratio the CPU cost alone predicts), then the
 * median and range over the pairs. docs/benchmarks.md, "Where the application's cost is".
 *
 * BENCH_PAIRS (3), BENCH_ROUNDS (5), BENCH_ROUND_SECONDS (3), BENCH_CONNECTIONS (50).
 */
import {
  load,
  loadWithCpu,
  pinLoadGenerator,
  pinnedServerCpu,
  startBaseline,
  whilePinned,
  type BenchServer,
} from './support/http-load';
import { LeafServer, ensureBuilt } from './support/leaf-server';
import { median } from './support/report';

const PAIRS = Number(process.env.BENCH_PAIRS ?? 3);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const ROUND_SECONDS = Number(process.env.BENCH_ROUND_SECONDS ?? 3);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
const ROUTES: ReadonlyArray<readonly [string, string]> = [
  ['segment', '/api/segment/get/leaf-segment-test'],
  ['snowflake', '/api/snowflake/get/bench'],
];

const log = (line: string): void => void process.stderr.write(`${line}\n`);

/** CPU µs per request of one throughput run against `port`, or NaN without `/proc`. */
async function cpuPerRequest(pid: number, port: number, path: string): Promise<number> {
  const { run, cpuUsPerRequest } = await loadWithCpu(`http://127.0.0.1:${port}${path}`, pid, {
    durationSec: ROUND_SECONDS,
    connections: CONNECTIONS,
  });
  if (run.errors + run.non2xx > 0) throw new Error(`${path}: errors or non-2xx answers`);
  return cpuUsPerRequest;
}

async function measurePair(
  cpu: string | null,
): Promise<Map<string, { bare: number[]; app: number[] }>> {
  let bare: BenchServer | null = null;
  let app: LeafServer | null = null;
  try {
    [bare, app] = await Promise.all([
      startBaseline(),
      LeafServer.start('default configuration', {}, { cpu }),
    ]);
    const servers = [
      { who: 'bare' as const, pid: bare.pid, port: bare.port },
      { who: 'app' as const, pid: app.pid, port: app.port },
    ];
    const figures = new Map(
      ROUTES.map(([name]) => [name, { bare: [] as number[], app: [] as number[] }]),
    );
    await whilePinned(async () => {
      for (const [, path] of ROUTES) {
        for (const s of servers) {
          await load(`http://127.0.0.1:${s.port}${path}`, {
            durationSec: 2,
            connections: CONNECTIONS,
          });
        }
      }
      for (let round = 0; round < ROUNDS; round++) {
        const order = round % 2 === 0 ? servers : [...servers].reverse();
        for (const [name, path] of ROUTES) {
          for (const s of order)
            figures.get(name)![s.who].push(await cpuPerRequest(s.pid, s.port, path));
        }
      }
    });
    return figures;
  } finally {
    await Promise.all([bare?.stop(), app?.stop()]);
  }
}

async function main(): Promise<void> {
  ensureBuilt(log);
  const pinning = pinLoadGenerator();
  const cpu = pinnedServerCpu();
  log(
    `${pinning}; ${PAIRS} fresh pairs × ${ROUNDS} rounds of ${ROUND_SECONDS} s, ${CONNECTIONS} connections`,
  );
  const ratios = new Map<string, number[]>(ROUTES.map(([name]) => [name, []]));
  const lines = [
    '| pair | route | bare µs CPU/req | application µs CPU/req | bare ÷ application |',
    '|---|---|---:|---:|---:|',
  ];
  for (let pair = 1; pair <= PAIRS; pair++) {
    const figures = await measurePair(cpu);
    for (const [name] of ROUTES) {
      const { bare, app } = figures.get(name)!;
      const ratio = median(bare) / median(app);
      ratios.get(name)!.push(ratio);
      lines.push(
        `| ${pair} | ${name} | ${median(bare).toFixed(1)} | ${median(app).toFixed(1)} | ${(ratio * 100).toFixed(1)} % |`,
      );
      log(
        `pair ${pair} ${name}: bare ${bare.map((v) => v.toFixed(1)).join(' ')}; app ${app.map((v) => v.toFixed(1)).join(' ')}`,
      );
    }
  }
  for (const [name, list] of ratios) {
    const sorted = [...list].sort((a, b) => a - b);
    lines.push(
      `| all | ${name} | | | **${(median(list) * 100).toFixed(1)} %** (pairs ${(sorted[0] * 100).toFixed(1)}–${(sorted[sorted.length - 1] * 100).toFixed(1)} %) |`,
    );
  }
  process.stdout.write(`${lines.join('\n')}\n`);
}

main().catch((error: unknown) => {
  log(String(error instanceof Error ? (error.stack ?? error.message) : error));
  process.exit(1);
});
