import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { availableParallelism, cpus } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { Pool } from 'undici';
import { fmt, median, ms, percentRow, type BenchContext, type BenchRow } from './report';

/** A benchmark server in its own process (see bench-server.ts). */
export interface BenchServer {
  readonly port: number;
  stop(): Promise<void>;
}

/**
 * On a machine with at least two cores and `taskset`, every server is pinned to core 1 and
 * the load generator (this process) to core 0 while it loads them ({@link whilePinned}), so
 * client and server stop taking turns on the same cores — the main source of run-to-run
 * noise on a small machine. Returns a label.
 */
export function pinLoadGenerator(): string {
  const pinnable =
    availableParallelism() >= 2 && spawnSync('taskset', ['-cp', String(process.pid)]).status === 0;
  serverCpu = pinnable ? '1' : null;
  return pinnable ? 'client pinned to core 0 while loading, servers to core 1' : 'no CPU pinning';
}

let serverCpu: string | null = null;

/**
 * Runs `fn` with this process pinned to core 0 when the servers are pinned to core 1, then
 * lets it run on every core again: the in-process benchmarks that follow must not be
 * confined to one core.
 */
export async function whilePinned<T>(fn: () => Promise<T>): Promise<T> {
  if (serverCpu === null) return fn();
  const all = `0-${cpus().length - 1}`;
  spawnSync('taskset', ['-a', '-cp', '0', String(process.pid)]);
  try {
    return await fn();
  } finally {
    spawnSync('taskset', ['-a', '-cp', all, String(process.pid)]);
  }
}

/** Starts `bench-server.ts` in `mode` and resolves once it listens. */
export function startServer(mode: 'leaf' | 'baseline'): Promise<BenchServer> {
  const root = join(__dirname, '..', '..');
  const node = [
    process.execPath,
    '-r',
    'ts-node/register/transpile-only',
    '-r',
    'tsconfig-paths/register',
    join(__dirname, 'bench-server.ts'),
    mode,
  ];
  const [command, ...args] = serverCpu === null ? node : ['taskset', '-c', serverCpu, ...node];
  const child: ChildProcess = spawn(command, args, {
    cwd: root,
    // stdin is a pipe only so that the server notices when this process is gone.
    stdio: ['pipe', 'pipe', 'inherit'],
    env: { ...process.env, TS_NODE_TRANSPILE_ONLY: 'true' },
  });
  return new Promise((resolve, reject) => {
    let out = '';
    child.once('exit', (code) => reject(new Error(`bench server (${mode}) exited with ${code}`)));
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const match = /READY (\d+)/.exec(out);
      if (!match) return;
      child.removeAllListeners('exit');
      resolve({
        port: Number(match[1]),
        stop: () =>
          new Promise<void>((done) => {
            if (child.exitCode !== null || child.signalCode !== null) return done();
            const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
            child.once('exit', () => {
              clearTimeout(timer);
              done();
            });
            child.kill('SIGTERM');
          }),
      });
    });
  });
}

/** Result of one load run. */
export interface LoadResult {
  readonly requestsPerSec: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly errors: number;
  readonly non2xx: number;
}

/**
 * Runs autocannon against `url`. Without `rate` it is a throughput run (as fast as
 * `connections` allow); with `rate` it sends that many requests per second in total.
 */
export async function load(
  url: string,
  options: { durationSec: number; connections: number; rate?: number; pipelining?: number },
): Promise<LoadResult> {
  const result = await autocannon({
    url,
    duration: options.durationSec,
    connections: options.connections,
    pipelining: options.pipelining ?? 1,
    overallRate: options.rate,
  });
  return {
    requestsPerSec: result.requests.average,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    errors: result.errors + result.timeouts,
    non2xx: result.non2xx,
  };
}

/** Result of a fixed-rate run: counts and latencies in milliseconds. */
export interface FixedRateResult {
  readonly sent: number;
  readonly failed: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly p999Ms: number;
  readonly maxMs: number;
  readonly p99ScheduledMs: number;
}

/**
 * Starts `call` `rate` times per second for `durationSec` (open loop: a call starts at its
 * scheduled time whether or not earlier ones have finished; the scheduler wakes every
 * millisecond and starts every call that is due) and measures each latency twice, with
 * microsecond resolution: from the moment the call started (`p99Ms`, the service time) and
 * from the moment it was *scheduled* (`p99ScheduledMs`: a stalled server cannot hide behind
 * a waiting client, no coordinated omission; this one also includes the caller's own timer
 * lateness). A call that resolves `false` or throws counts as failed. `stop` ends the run
 * early (checked before each call).
 */
export async function fixedRateCalls(
  call: () => Promise<boolean>,
  options: { rate: number; durationSec: number; stop?: () => boolean },
): Promise<FixedRateResult> {
  const latencies: number[] = [];
  const scheduledLatencies: number[] = [];
  let failed = 0;
  const total = Math.round(options.rate * options.durationSec);
  const intervalNs = 1e9 / options.rate;
  const start = process.hrtime.bigint();
  const inFlight: Array<Promise<void>> = [];
  const send = async (scheduledNs: bigint): Promise<void> => {
    const sentNs = process.hrtime.bigint();
    try {
      if (!(await call())) {
        failed++;
        return;
      }
    } catch {
      failed++;
      return;
    }
    const endNs = process.hrtime.bigint();
    latencies.push(Number(endNs - sentNs) / 1e6);
    scheduledLatencies.push(Number(endNs - scheduledNs) / 1e6);
  };
  let sent = 0;
  while (sent < total && !options.stop?.()) {
    const now = process.hrtime.bigint();
    const due = Math.min(total, Math.floor(Number(now - start) / intervalNs) + 1);
    while (sent < due && !options.stop?.()) {
      inFlight.push(send(start + BigInt(Math.round(sent * intervalNs))));
      sent++;
    }
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
  await Promise.all(inFlight);
  latencies.sort((a, b) => a - b);
  scheduledLatencies.sort((a, b) => a - b);
  const pick = (list: number[], q: number) =>
    list[Math.min(list.length - 1, Math.floor(q * list.length))] ?? NaN;
  return {
    sent,
    failed,
    p50Ms: pick(latencies, 0.5),
    p99Ms: pick(latencies, 0.99),
    p999Ms: pick(latencies, 0.999),
    maxMs: latencies.at(-1) ?? NaN,
    p99ScheduledMs: pick(scheduledLatencies, 0.99),
  };
}

/**
 * {@link fixedRateCalls} of `GET url` over keep-alive connections (an undici pool: far less
 * client overhead than `node:http`, so the client's own pauses stay out of the figures); a
 * non-200 answer counts as failed.
 */
export async function fixedRate(
  url: string,
  options: { rate: number; durationSec: number; connections: number },
): Promise<FixedRateResult> {
  const target = new URL(url);
  const pool = new Pool(target.origin, { connections: options.connections, pipelining: 1 });
  const path = target.pathname + target.search;
  try {
    return await fixedRateCalls(async () => {
      const res = await pool.request({ path, method: 'GET' });
      await res.body.dump();
      return res.statusCode === 200;
    }, options);
  } finally {
    await pool.close();
  }
}

/** Latency figures of a fixed-rate run, one cell. */
function latencyCell(r: FixedRateResult): string {
  return `p50 ${ms(r.p50Ms)}, p99 ${ms(r.p99Ms)}, p99.9 ${ms(r.p999Ms)}`;
}

/**
 * Compares a Leaf route with the same path on the bare server: alternating throughput runs
 * (three each after a warm-up; one each when quick), then latency at the fixed rate. Returns
 * the two rows (throughput ≥ 90 % of the bare route; p99 ≤ 2 ms) and the Leaf route's median
 * requests per second.
 */
export async function compareWithBaseline(
  context: BenchContext,
  options: { label: string; path: string },
): Promise<{ rows: BenchRow[]; leafRps: number }> {
  const { base, leaf } = await context.servers();
  return whilePinned(() => compare(context, options, base, leaf));
}

async function compare(
  context: BenchContext,
  options: { label: string; path: string },
  base: string,
  leaf: string,
): Promise<{ rows: BenchRow[]; leafRps: number }> {
  const { label, path } = options;
  const { seconds, connections, rate, quick } = context;
  if (!quick) {
    await load(base + path, { durationSec: 1, connections });
    await load(leaf + path, { durationSec: 1, connections });
  }
  const baseRuns: LoadResult[] = [];
  const leafRuns: LoadResult[] = [];
  // Alternate so drift hits both alike.
  for (let i = 0; i < (quick ? 1 : 3); i++) {
    baseRuns.push(await load(base + path, { durationSec: seconds, connections }));
    leafRuns.push(await load(leaf + path, { durationSec: seconds, connections }));
  }
  const baseRps = median(baseRuns.map((r) => r.requestsPerSec));
  const leafRps = median(leafRuns.map((r) => r.requestsPerSec));
  const errors = [...baseRuns, ...leafRuns].reduce((n, r) => n + r.errors + r.non2xx, 0);
  context.log(
    `GET ${path}: ${connections} connections, ${seconds} s x ${baseRuns.length} alternating runs, ` +
      `bare ${fmt(baseRps)} req/s, Leaf ${fmt(leafRps)} req/s, errors or non-2xx: ${errors}`,
  );
  if (errors > 0) throw new Error(`GET ${path}: ${errors} errors or non-2xx answers`);

  const fixedBase = await fixedRate(base + path, { rate, durationSec: seconds, connections: 10 });
  const fixedLeaf = await fixedRate(leaf + path, { rate, durationSec: seconds, connections: 10 });
  for (const [who, r] of [
    ['bare', fixedBase],
    ['Leaf', fixedLeaf],
  ] as const) {
    context.log(
      `  ${who} at ${fmt(rate)} req/s: ${latencyCell(r)}, max ${ms(r.maxMs)}, p99 from schedule ` +
        `${ms(r.p99ScheduledMs)}; ${r.sent} sent, ${r.failed} failed`,
    );
  }
  if (fixedLeaf.failed > 0)
    throw new Error(`GET ${path}: ${fixedLeaf.failed} failed at a fixed rate`);
  const p99Ratio = fixedLeaf.p99Ms / fixedBase.p99Ms;
  return {
    leafRps,
    rows: [
      percentRow({
        measurement: `\`GET ${path}\` throughput (${connections} connections)`,
        value: leafRps,
        figure: `${fmt(leafRps)} req/s`,
        baselineValue: baseRps,
        baseline: `bare Nest+Fastify route ${fmt(baseRps)} req/s`,
        min: 0.9,
      }),
      {
        measurement: `${label} latency at a fixed ${fmt(rate)} req/s`,
        figure: latencyCell(fixedLeaf),
        baseline: latencyCell(fixedBase),
        ratio: `p99 ×${p99Ratio.toFixed(2)}`,
        target: 'p99 ≤ 2 ms',
        met: fixedLeaf.p99Ms <= 2,
      },
    ],
  };
}

/**
 * The bare and the Leaf server of the HTTP runs, started together on first use (with the
 * load generator pinned, see {@link pinLoadGenerator}) and stopped by {@link stop}.
 */
export class BenchServers {
  private started: Promise<{ servers: BenchServer[]; base: string; leaf: string }> | null = null;

  constructor(private readonly log: (line: string) => void) {}

  /** The base URLs, starting both servers on the first call. */
  async urls(): Promise<{ base: string; leaf: string }> {
    this.started ??= this.start();
    const { base, leaf } = await this.started;
    return { base, leaf };
  }

  /** Stops both servers if they were started. */
  async stop(): Promise<void> {
    if (this.started === null) return;
    const started = this.started;
    this.started = null;
    const { servers } = await started.catch(() => ({ servers: [] as BenchServer[] }));
    await Promise.all(servers.map((server) => server.stop()));
  }

  private async start(): Promise<{ servers: BenchServer[]; base: string; leaf: string }> {
    this.log(`HTTP runs: ${pinLoadGenerator()}`);
    const started = await Promise.allSettled([startServer('baseline'), startServer('leaf')]);
    const servers = started.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
    const failure = started.find((r) => r.status === 'rejected');
    if (failure) {
      await Promise.all(servers.map((server) => server.stop()));
      throw failure.reason;
    }
    const [baseline, leaf] = servers;
    return {
      servers: [baseline, leaf],
      base: `http://127.0.0.1:${baseline.port}`,
      leaf: `http://127.0.0.1:${leaf.port}`,
    };
  }
}
