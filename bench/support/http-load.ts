import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { Pool } from 'undici';
import { fmt, median, ratioLine } from './report';

/** A benchmark server in its own process (see bench-server.ts). */
export interface BenchServer {
  readonly port: number;
  stop(): Promise<void>;
}

/**
 * On a machine with at least two cores and `taskset`, the load generator (this process) is
 * pinned to core 0 and every server to core 1, so client and server stop taking turns on the
 * same cores — the main source of run-to-run noise on a small machine. Returns a label.
 */
export function pinLoadGenerator(): string {
  const pinnable =
    availableParallelism() >= 2 &&
    spawnSync('taskset', ['-cp', '0', String(process.pid)]).status === 0;
  serverCpu = pinnable ? '1' : null;
  return pinnable ? 'client pinned to core 0, servers to core 1' : 'no CPU pinning';
}

let serverCpu: string | null = null;

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
    stdio: ['ignore', 'pipe', 'inherit'],
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
            child.once('exit', () => done());
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

/**
 * Sends `rate` requests per second for `durationSec` over keep-alive connections (an
 * undici pool: far less client overhead than `node:http`, so the client's own pauses stay
 * out of the figures) and measures each latency twice, with microsecond resolution: from
 * the moment the request was sent (`p99Ms`, the service time) and from the moment it was
 * *scheduled* (`p99ScheduledMs`: a stalled server cannot hide behind a waiting client, no
 * coordinated omission; this one also includes the client's own timer lateness).
 */
export async function fixedRate(
  url: string,
  options: { rate: number; durationSec: number; connections: number },
): Promise<{
  sent: number;
  failed: number;
  p50Ms: number;
  p99Ms: number;
  p999Ms: number;
  maxMs: number;
  p99ScheduledMs: number;
}> {
  const target = new URL(url);
  const pool = new Pool(target.origin, { connections: options.connections, pipelining: 1 });
  const path = target.pathname + target.search;
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
      const res = await pool.request({ path, method: 'GET' });
      await res.body.dump();
      if (res.statusCode !== 200) failed++;
    } catch {
      failed++;
      return;
    }
    const endNs = process.hrtime.bigint();
    latencies.push(Number(endNs - sentNs) / 1e6);
    scheduledLatencies.push(Number(endNs - scheduledNs) / 1e6);
  };
  let sent = 0;
  while (sent < total) {
    const now = process.hrtime.bigint();
    const due = Math.min(total, Math.floor(Number(now - start) / intervalNs) + 1);
    while (sent < due) {
      inFlight.push(send(start + BigInt(Math.round(sent * intervalNs))));
      sent++;
    }
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
  await Promise.all(inFlight);
  await pool.close();
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
 * Compares a Leaf route with the same path on the baseline server: two alternating
 * throughput runs each (after a warm-up), then latency at a fixed rate. Prints the figures
 * and returns the Leaf route's median requests per second.
 */
export async function compareWithBaseline(options: {
  label: string;
  path: string;
  baseUrl: string;
  leafUrl: string;
  seconds: number;
  connections: number;
  rate: number;
}): Promise<number> {
  const { label, path, baseUrl, leafUrl, seconds, connections, rate } = options;
  await load(baseUrl + path, { durationSec: 1, connections });
  await load(leafUrl + path, { durationSec: 1, connections });
  const baseRuns: LoadResult[] = [];
  const leafRuns: LoadResult[] = [];
  // Alternate so drift hits both alike.
  for (let i = 0; i < 3; i++) {
    baseRuns.push(await load(baseUrl + path, { durationSec: seconds, connections }));
    leafRuns.push(await load(leafUrl + path, { durationSec: seconds, connections }));
  }
  const baseRps = median(baseRuns.map((r) => r.requestsPerSec));
  const leafRps = median(leafRuns.map((r) => r.requestsPerSec));
  const errors = [...baseRuns, ...leafRuns].reduce((n, r) => n + r.errors + r.non2xx, 0);
  console.log(
    `\n== HTTP GET ${path} (${connections} connections, ${seconds} s x 3 alternating runs each, median; server in its own process)`,
  );
  console.log(`bare Nest+Fastify constant route            ${fmt(baseRps).padStart(14)} req/s`);
  console.log(`${label.padEnd(44)}${fmt(leafRps).padStart(14)} req/s`);
  console.log(ratioLine(`${label} throughput`, leafRps, baseRps, 0.9));
  console.log(`errors or non-2xx answers: ${errors}`);

  const fixedBase = await fixedRate(baseUrl + path, {
    rate,
    durationSec: seconds,
    connections: 10,
  });
  const fixedLeaf = await fixedRate(leafUrl + path, {
    rate,
    durationSec: seconds,
    connections: 10,
  });
  const line = (r: typeof fixedBase) =>
    `p50 ${r.p50Ms.toFixed(2)} ms  p99 ${r.p99Ms.toFixed(2)} ms  p99.9 ${r.p999Ms.toFixed(2)} ms  max ${r.maxMs.toFixed(2)} ms  ` +
    `(p99 from schedule ${r.p99ScheduledMs.toFixed(2)} ms; ${r.sent} sent, ${r.failed} failed)`;
  console.log(
    `\n== HTTP latency at a fixed ${fmt(rate)} req/s (keep-alive, 10 connections, ${seconds} s)`,
  );
  console.log(`bare Nest+Fastify constant route            ${line(fixedBase)}`);
  console.log(`${label.padEnd(44)}${line(fixedLeaf)}`);
  console.log(`${label} p99 target <= 2 ms: ${fixedLeaf.p99Ms <= 2 ? 'OK' : 'ABOVE TARGET'}`);
  return leafRps;
}

/** Settings of the HTTP comparisons, from the environment. */
export function httpSettings(): { seconds: number; connections: number; rate: number } {
  return {
    seconds: Number(process.env.BENCH_SECONDS ?? 5),
    connections: Number(process.env.BENCH_CONNECTIONS ?? 50),
    rate: Number(process.env.BENCH_RATE ?? 2000),
  };
}

/**
 * Pins the load generator, starts the baseline and the Leaf server, runs `fn` with their
 * base URLs and stops both whatever happens.
 */
export async function withBenchServers(
  fn: (urls: { base: string; leaf: string }) => Promise<void>,
): Promise<void> {
  console.log(`\nHTTP runs: ${pinLoadGenerator()}`);
  const baseline = await startServer('baseline');
  const leaf = await startServer('leaf');
  try {
    await fn({ base: `http://127.0.0.1:${baseline.port}`, leaf: `http://127.0.0.1:${leaf.port}` });
  } finally {
    await Promise.all([baseline.stop(), leaf.stop()]);
  }
}
