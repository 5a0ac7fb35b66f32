import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { availableParallelism, cpus } from 'node:os';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import ts from 'typescript';
import autocannon from 'autocannon';
import { Pool } from 'undici';
import { LeafServer, ensureBuilt } from './leaf-server';
import { fmt, median, medianInterval, ms, type BenchContext, type BenchRow } from './report';

/** A benchmark server in its own process (see bench-server.ts). */
export interface BenchServer {
  readonly port: number;
  /** Its process ID (for {@link cpuSeconds}). */
  readonly pid: number;
  stop(): Promise<void>;
}

/**
 * CPU time (user + system, seconds) a process has used so far, from `/proc/<pid>/stat`;
 * null where there is no `/proc`. CPU per request is a figure that other work on the cores
 * moves far less than requests per second.
 */
export function cpuSeconds(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command (which may hold spaces) start after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
  } catch {
    return null;
  }
}

/** Clock ticks per second of `/proc/<pid>/stat` (`getconf CLK_TCK`: 100 on Linux). */
const CLOCK_TICKS = 100;

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

/** The core servers are pinned to (`taskset -c`), null without pinning; see {@link pinLoadGenerator}. */
export function pinnedServerCpu(): string | null {
  return serverCpu;
}

const ROOT = join(__dirname, '..', '..');

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

/**
 * Compiles `bench-server.ts` to `dist/bench/support/bench-server.js` (TypeScript's
 * single-file transpiler, the compiler options of tsconfig.json), so the bare server runs as
 * the application does: plain `node` on JavaScript, importing the adapter settings from the
 * same build (`dist/src/bootstrap.js`). Not through ts-node: ts-node loads Node's `repl`,
 * which loads `domain`, which wraps every `EventEmitter` emit of the process — a per-request
 * cost (about 3 % of the bare route's CPU in a profile) that the application does not pay.
 */
function compileBaseline(): string {
  const source = join(__dirname, 'bench-server.ts');
  const target = join(ROOT, 'dist', 'bench', 'support', 'bench-server.js');
  const { outputText } = ts.transpileModule(readFileSync(source, 'utf8'), {
    fileName: source,
    compilerOptions: {
      module: ts.ModuleKind.CommonJS,
      target: ts.ScriptTarget.ES2022,
      experimentalDecorators: true,
      emitDecoratorMetadata: true,
      esModuleInterop: true,
    },
  });
  mkdirSync(dirname(target), { recursive: true });
  writeFileSync(target, outputText);
  return target;
}

/**
 * Starts the bare Nest + Fastify server (`bench-server.ts`, compiled by
 * {@link compileBaseline}; the build must exist, see `ensureBuilt`) and resolves once it
 * listens.
 */
export function startBaseline(): Promise<BenchServer> {
  const node = [process.execPath, compileBaseline()];
  const [command, ...args] = serverCpu === null ? node : ['taskset', '-c', serverCpu, ...node];
  const child: ChildProcess = spawn(command, args, {
    cwd: ROOT,
    // stdin is a pipe only so that the server notices when this process is gone.
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    let out = '';
    child.once('exit', (code) => reject(new Error(`bare bench server exited with ${code}`)));
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const match = /READY (\d+)/.exec(out);
      if (!match) return;
      child.removeAllListeners('exit');
      resolve({
        port: Number(match[1]),
        pid: child.pid!,
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
  /** Requests answered in the whole run. */
  readonly requests: number;
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
  options: {
    durationSec: number;
    connections: number;
    rate?: number;
    pipelining?: number;
    /** Sent with every request (a client token's `authorization`). */
    headers?: Record<string, string>;
  },
): Promise<LoadResult> {
  const result = await autocannon({
    url,
    duration: options.durationSec,
    connections: options.connections,
    pipelining: options.pipelining ?? 1,
    overallRate: options.rate,
    ...(options.headers ? { headers: options.headers } : {}),
  });
  return {
    requestsPerSec: result.requests.average,
    requests: result.requests.total,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    errors: result.errors + result.timeouts,
    non2xx: result.non2xx,
  };
}

/**
 * One throughput {@link load} of `url` and the CPU time the server process `pid` spent on it:
 * in seconds, and in microseconds per request answered (NaN where `/proc` does not tell).
 */
export async function loadWithCpu(
  url: string,
  pid: number,
  options: { durationSec: number; connections: number; headers?: Record<string, string> },
): Promise<{ run: LoadResult; cpuSeconds: number; cpuUsPerRequest: number }> {
  const before = cpuSeconds(pid);
  const run = await load(url, options);
  const after = cpuSeconds(pid);
  const spent = before === null || after === null ? NaN : after - before;
  return {
    run,
    cpuSeconds: spent,
    cpuUsPerRequest: run.requests > 0 ? (spent * 1e6) / run.requests : NaN,
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

/** Untimed seconds at the rate before a fixed-rate run is measured (see {@link fixedRate}). */
const FIXED_RATE_WARM_UP_SEC = 1;

/**
 * {@link fixedRateCalls} of `GET url` over keep-alive connections (an undici pool: far less
 * client overhead than `node:http`, so the client's own pauses stay out of the figures); a
 * non-200 answer counts as failed. The first second at the rate is not timed: the pool opens
 * its connections then (each a TCP handshake and a new socket on the server, and for a
 * forwarded call the server's own connections to the next hop), which cost 10–30 ms for the
 * first hundred calls — a p99 of a 10 s run is its slowest 200 calls, so a cold start would
 * be most of it. The figures are the steady state a long-lived client sees.
 */
export async function fixedRate(
  url: string,
  options: { rate: number; durationSec: number; connections: number },
): Promise<FixedRateResult> {
  const target = new URL(url);
  const pool = new Pool(target.origin, { connections: options.connections, pipelining: 1 });
  const path = target.pathname + target.search;
  const call = async () => {
    const res = await pool.request({ path, method: 'GET' });
    await res.body.dump();
    return res.statusCode === 200;
  };
  try {
    await fixedRateCalls(call, { rate: options.rate, durationSec: FIXED_RATE_WARM_UP_SEC });
    return await fixedRateCalls(call, options);
  } finally {
    await pool.close();
  }
}

/** Latency figures of a fixed-rate run, one cell. */
function latencyCell(r: FixedRateResult): string {
  return `p50 ${ms(r.p50Ms)}, p99 ${ms(r.p99Ms)}, p99.9 ${ms(r.p999Ms)}`;
}

/**
 * The paired-round order: the bare server in the middle of every round, so each application
 * is measured right next to it, once just before and once just after it in alternate rounds
 * (indices into the targets: 0 bare, 1 default configuration, 2 access log on).
 */
export function roundOrder(round: number): readonly number[] {
  return round % 2 === 0 ? [1, 0, 2] : [2, 0, 1];
}

/**
 * CPU use (cores) of the bare server below which it was not the server's own cost that set
 * its rate (it did not get a core, or the load generator did not keep it busy).
 */
const SERVER_BOUND_CORES = 0.8;

/** Warm-up of each server before the timed rounds (not counted): JIT, pools, the first ranges. */
const WARM_UP_SEC = 2;

/** A ratio summary as a cell: the median, its 95 % interval and the range of the rounds. */
export function ratioCell(ratios: number[]): string {
  const pct = (value: number) => `${(value * 100).toFixed(1)} %`;
  const s = medianInterval(ratios);
  const interval =
    s.low !== null && s.high !== null ? `95 % CI ${(s.low * 100).toFixed(1)}–${pct(s.high)}, ` : '';
  return ratios.length === 1
    ? `**${pct(s.median)}** (1 round)`
    : `**${pct(s.median)}** (${interval}rounds ${(s.min * 100).toFixed(1)}–${pct(s.max)}, n = ${ratios.length})`;
}

/**
 * Compares a Leaf route with the same path on the bare server, for the application with its
 * default configuration (access log off) and with `LEAF_ACCESS_LOG=true`. After a warm-up of
 * each server (not timed), `BENCH_ROUNDS` paired rounds (see {@link roundOrder}): in each, the
 * three servers are loaded one after the other with the same connections and length, and
 * each application's throughput is divided by the bare route's **of the same round**. The
 * figure is the median of those per-round ratios, with a distribution-free 95 % confidence
 * interval of it ({@link medianInterval}) and the range: a burst of other work on the shared
 * cores spoils one round's ratio, not the median. Then latency at the fixed rate for the
 * default configuration. Returns the rows (the default's ratio ≥ 90 %, met when the interval's
 * lower end is; p99 ≤ 2 ms) and the default configuration's median requests per second.
 */
export async function compareWithBaseline(
  context: BenchContext,
  options: { label: string; path: string },
): Promise<{ rows: BenchRow[]; leafRps: number }> {
  const servers = await context.servers();
  return whilePinned(() => compare(context, options, servers));
}

async function compare(
  context: BenchContext,
  options: { label: string; path: string },
  servers: ServerUrls,
): Promise<{ rows: BenchRow[]; leafRps: number }> {
  const { label, path } = options;
  const { seconds, roundSeconds, connections, rate, quick, rounds } = context;
  const { base, leaf, pids } = servers;
  const targets = [
    { who: 'bare', url: base + path, pid: pids.base },
    { who: 'default', url: leaf + path, pid: pids.leaf },
    { who: 'access log on', url: servers.leafAccessLog + path, pid: pids.leafAccessLog },
  ];
  if (!quick) {
    for (const { url } of targets) await load(url, { durationSec: WARM_UP_SEC, connections });
  }
  const runs: LoadResult[][] = targets.map(() => []);
  /** Server CPU time per request answered, in microseconds, of each round (NaN: unknown). */
  const cpu: number[][] = targets.map(() => []);
  /** Cores' worth of CPU each server used during each round (NaN: unknown). */
  const busy: number[][] = targets.map(() => []);
  for (let round = 0; round < rounds; round++) {
    for (const i of roundOrder(round)) {
      const { url, pid } = targets[i];
      const measured = await loadWithCpu(url, pid, { durationSec: roundSeconds, connections });
      runs[i].push(measured.run);
      cpu[i].push(measured.cpuUsPerRequest);
      busy[i].push(measured.cpuSeconds / roundSeconds);
    }
    context.log(
      `  round ${round + 1} (${roundOrder(round)
        .map((i) => targets[i].who)
        .join(', ')}): ` +
        targets
          .map(({ who }, i) => {
            const rps = runs[i][round].requestsPerSec;
            const ratio =
              i === 0 ? '' : ` (${((rps / runs[0][round].requestsPerSec) * 100).toFixed(1)} %)`;
            const us = Number.isNaN(cpu[i][round])
              ? ''
              : `, ${cpu[i][round].toFixed(1)} µs CPU/req`;
            return `${who} ${fmt(rps)} req/s${ratio}${us}`;
          })
          .join('; '),
    );
  }
  const rps = runs.map((list) => list.map((r) => r.requestsPerSec));
  const [baseRps, leafRps, loggedRps] = rps.map((list) => median(list));
  /** Per-round throughput ratios of target `i` to the bare route. */
  const ratios = (i: number) => rps[i].map((value, round) => value / rps[0][round]);
  /** Per-round CPU ratios, bare ÷ target `i` (the throughput ratio the CPU cost alone predicts). */
  const cpuRatios = (i: number) =>
    cpu[i].map((us, round) => cpu[0][round] / us).filter((value) => Number.isFinite(value));
  const errors = runs.flat().reduce((n, r) => n + r.errors + r.non2xx, 0);
  context.log(
    `GET ${path}: ${connections} connections, ${roundSeconds} s x ${rounds} paired rounds` +
      `${quick ? '' : ` after ${WARM_UP_SEC} s of warm-up each`}; medians bare ${fmt(baseRps)}, ` +
      `default ${fmt(leafRps)}, access log on ${fmt(loggedRps)} req/s; errors or non-2xx: ${errors}`,
  );
  for (const i of [1, 2]) {
    const cpuCell = cpuRatios(i).length === rounds ? ratioCell(cpuRatios(i)) : 'unknown';
    context.log(
      `  ${targets[i].who} ÷ bare, per round: throughput ${ratioCell(ratios(i))}; CPU per ` +
        `request (bare ÷ ${targets[i].who}) ${cpuCell}` +
        (cpuRatios(i).length === rounds
          ? `; CPU medians ${median(cpu[0]).toFixed(1)} : ${median(cpu[i]).toFixed(1)} µs`
          : ''),
    );
  }
  // A server that used well under a core either did not get one (other work on the cores) or
  // was not kept busy (the load generator set the rate, and every server then answers about
  // as fast as it is asked, whatever its cost per request): not the quiet-machine ratio.
  const bareBusy = median(busy[0].filter((value) => !Number.isNaN(value)));
  if (!Number.isNaN(bareBusy)) {
    context.log(
      `  bare server's CPU use during its runs: ${bareBusy.toFixed(2)} cores (median)` +
        (bareBusy < SERVER_BOUND_CORES
          ? ` — below ${SERVER_BOUND_CORES}: the server did not have a core to itself or the ` +
            'load generator did not keep it busy; these throughput ratios are not the ' +
            'quiet-machine ones (read the CPU ratio too)'
          : ''),
    );
  }
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
  /** The median server CPU time per request of target `i`, where `/proc` gave it. */
  const cpuFigure = (i: number): string => {
    const known = cpu[i].filter((us) => !Number.isNaN(us));
    return known.length === 0 ? '' : `, ${median(known).toFixed(1)} µs CPU/req`;
  };
  const throughputRow = (measurement: string, i: number, min?: number): BenchRow => {
    const summary = medianInterval(ratios(i));
    return {
      measurement,
      figure: `${fmt(median(rps[i]))} req/s${cpuFigure(i)}`,
      baseline:
        `bare Nest+Fastify route ${fmt(baseRps)} req/s${cpuFigure(0)}` +
        (Number.isNaN(bareBusy) ? '' : `, ${bareBusy.toFixed(2)} cores busy`),
      ratio: ratioCell(ratios(i)),
      target: min === undefined ? '—' : `≥ ${(min * 100).toFixed(0)} %`,
      // Met when the run shows it: the lower end of the interval (with too few rounds for
      // one, the median) at or above the target.
      met: min === undefined ? null : (summary.low ?? summary.median) >= min,
    };
  };
  return {
    leafRps,
    rows: [
      throughputRow(
        `\`GET ${path}\` throughput (${connections} connections), default configuration (access log off)`,
        1,
        0.9,
      ),
      // Opt-in, so no target: what the access log costs (docs/benchmarks.md).
      throughputRow(
        `\`GET ${path}\` throughput (${connections} connections), access log on (\`LEAF_ACCESS_LOG=true\`)`,
        2,
      ),
      {
        measurement: `${label} latency at a fixed ${fmt(rate)} req/s, default configuration`,
        figure: latencyCell(fixedLeaf),
        baseline: latencyCell(fixedBase),
        ratio: `p99 ×${p99Ratio.toFixed(2)}`,
        target: 'p99 ≤ 2 ms',
        met: fixedLeaf.p99Ms <= 2,
      },
    ],
  };
}

/** The base URLs of the HTTP servers. */
export interface ServerUrls {
  /** The bare Nest + Fastify server. */
  readonly base: string;
  /** The application with its default configuration (access log off). */
  readonly leaf: string;
  /** The application with `LEAF_ACCESS_LOG=true`. */
  readonly leafAccessLog: string;
  /** The process ID of each. */
  readonly pids: Readonly<Record<'base' | 'leaf' | 'leafAccessLog', number>>;
}

/**
 * The HTTP servers of the benchmarks — the bare one, the application with its defaults and
 * the application with the access log on — started together on first use (the application
 * built first if needed, with the load generator pinned, see {@link pinLoadGenerator}) and
 * stopped by {@link stop}.
 */
export class BenchServers {
  private started: Promise<{
    baseline: BenchServer;
    leafs: LeafServer[];
    urls: ServerUrls;
  }> | null = null;

  constructor(private readonly log: (line: string) => void) {}

  /** The base URLs, starting the servers on the first call. */
  async urls(): Promise<ServerUrls> {
    this.started ??= this.start();
    return (await this.started).urls;
  }

  /**
   * Stops the servers if they were started (SIGTERM, as an orchestrator stops the
   * application) and logs how many lines each application wrote to stdout.
   */
  async stop(): Promise<void> {
    if (this.started === null) return;
    const started = this.started;
    this.started = null;
    const servers = await started.catch(() => null);
    if (servers === null) return;
    const [, ...stopped] = await Promise.all([
      servers.baseline.stop(),
      ...servers.leafs.map((leaf) => leaf.stop()),
    ]);
    stopped.forEach((result, i) => {
      this.log(
        `Leaf (${servers.leafs[i].label}): exit code ${result.code}, ${fmt(result.lines)} lines ` +
          `(${fmt(result.bytes / 1e6, 1)} MB) on stdout`,
      );
    });
  }

  private async start(): Promise<{ baseline: BenchServer; leafs: LeafServer[]; urls: ServerUrls }> {
    ensureBuilt(this.log);
    this.log(`HTTP runs: ${pinLoadGenerator()}`);
    this.log(
      'Leaf: node dist/src/main.js in an empty directory, environment PORT=0 and nothing else ' +
        'of its own (every default), stdout to a file; the same with LEAF_ACCESS_LOG=true',
    );
    const cpu = serverCpu;
    const started = await Promise.allSettled([
      startBaseline(),
      LeafServer.start('default configuration', {}, { cpu }),
      LeafServer.start('LEAF_ACCESS_LOG=true', { LEAF_ACCESS_LOG: 'true' }, { cpu }),
    ]);
    const failure = started.find((r) => r.status === 'rejected');
    if (failure) {
      await Promise.all(
        started.map((r) => (r.status === 'fulfilled' ? r.value.stop() : undefined)),
      );
      throw failure.reason;
    }
    const [baseline, leaf, logged] = started.map(
      (r) => (r as PromiseFulfilledResult<BenchServer | LeafServer>).value,
    );
    const leafs = [leaf as LeafServer, logged as LeafServer];
    // A benchmark that ends by an exception must not leave the application running.
    process.once('exit', () => leafs.forEach((server) => server.kill()));
    return {
      baseline: baseline as BenchServer,
      leafs,
      urls: {
        base: `http://127.0.0.1:${baseline.port}`,
        leaf: `http://127.0.0.1:${leaf.port}`,
        leafAccessLog: `http://127.0.0.1:${logged.port}`,
        pids: { base: baseline.pid, leaf: leaf.pid, leafAccessLog: logged.pid },
      },
    };
  }
}
