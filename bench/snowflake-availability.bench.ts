/**
 * Snowflake-mode availability benchmark: how long the safety rules keep a real instance
 * from issuing IDs, with real processes and a real ZooKeeper (behind a TCP proxy that can
 * cut the application off without touching the shared server).
 *
 *   npm run bench:availability -- [--baseline <checkout>] [--root <checkout>] \
 *     [--zk 127.0.0.1:2181] [--only 1,2,3] [--repeat N]
 *
 * `--root` is the checkout whose application is measured (default: this repository): it is
 * run as `node -r ts-node/register/transpile-only -r tsconfig-paths/register src/main.ts`
 * with that directory as working directory. `--baseline` measures a second checkout (an
 * earlier release, e.g. from `git archive`, with `node_modules` linked) in the same run,
 * first, so before and after are compared on the same machine under the same load.
 *
 * 1. Restart after kill -9, same identity and state dir: time from the kill to the new
 *    process's first ID, and its spawn-to-listening time.
 * 2. Same, but the new process gets an empty state dir (another host, same ip:port).
 * 3. ZooKeeper cut-off: the proxy refuses every connection; time until the first non-200
 *    answer (and its code), then time until IDs flow again once the proxy is restored.
 *
 * Only loopback addresses are used; every wait is bounded; every child is killed on exit.
 * Logs of every process are kept under a temp directory printed at the end.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { randomBytes } from 'node:crypto';
import { ZookeeperClient } from '@app/leaf/adapters/zookeeper/zookeeper.client';
import { APP_ARGS } from '../test/support/app-process';
import { TcpProxy } from '../test/support/tcp-proxy';
import { zookeeperConnectString } from '../test/support/services';
import { deleteTree } from '../test/support/zookeeper';
import type { BenchModule } from './support/report';

// ---------------------------------------------------------------------------------------
// Arguments

interface Args {
  root: string;
  baseline: string | null;
  zkHost: string;
  zkPort: number;
  only: Set<number>;
  repeat: number;
}

function parseArgs(argv: string[]): Args {
  const args: Args = {
    root: resolve(__dirname, '..'),
    baseline: null,
    zkHost: '127.0.0.1',
    zkPort: 2181,
    only: new Set([1, 2, 3]),
    repeat: 1,
  };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    const value = argv[i + 1];
    if (value === undefined) throw new Error(`${flag} needs a value`);
    if (flag === '--root') args.root = resolve(value);
    else if (flag === '--baseline') args.baseline = resolve(value);
    else if (flag === '--zk') {
      const match = /^(127\.0\.0\.1|localhost):(\d+)$/.exec(value);
      if (!match) throw new Error(`--zk must be a loopback host:port (got "${value}")`);
      args.zkHost = '127.0.0.1';
      args.zkPort = Number(match[2]);
    } else if (flag === '--only') {
      args.only = new Set(value.split(',').map((part) => Number(part.trim())));
    } else if (flag === '--repeat') {
      args.repeat = Math.max(1, Math.min(10, Number(value) || 1));
    } else throw new Error(`unknown argument ${flag}`);
    i++;
  }
  for (const root of [args.root, args.baseline]) {
    if (root !== null && !existsSync(join(root, 'src', 'main.ts')))
      throw new Error(`${root} has no src/main.ts`);
  }
  return args;
}

// ---------------------------------------------------------------------------------------
// Child processes

/** Hard limit on any child's life: nothing here should take this long. */
const CHILD_HARD_LIMIT_MS = 420_000;

const children = new Set<ChildProcess>();

function killAllChildren(): void {
  for (const child of children) child.kill('SIGKILL');
}
process.on('exit', killAllChildren);

function childEnv(env: Record<string, string>): NodeJS.ProcessEnv {
  const base: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (!/^(LEAF_|PORT$|HOST$)/.test(name)) base[name] = value;
  }
  return { ...base, NO_COLOR: '1', ...env };
}

interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** One application process started from `<root>/src/main.ts`. */
class LeafProcess {
  output = '';
  /** Complete output lines with their arrival time. */
  readonly lines: { at: number; text: string }[] = [];
  private partial = '';
  readonly spawnedAt = Date.now();
  listeningAt: number | null = null;
  port: number | null = null;
  exitedAt: number | null = null;
  readonly exited: Promise<Exit>;
  private readonly child: ChildProcess;
  private readonly timer: NodeJS.Timeout;

  constructor(
    readonly label: string,
    root: string,
    env: Record<string, string>,
    private readonly logFile: string,
  ) {
    this.child = spawn(process.execPath, APP_ARGS, {
      cwd: root,
      env: childEnv(env),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.add(this.child);
    const onData = (chunk: string): void => {
      this.output += chunk;
      const parts = (this.partial + chunk).split('\n');
      this.partial = parts.pop() ?? '';
      for (const text of parts) this.lines.push({ at: Date.now(), text });
      if (this.port === null) {
        const match = /Leaf listening on http:\/\/[^\s]+:(\d+)/.exec(this.output);
        if (match) {
          this.port = Number(match[1]);
          this.listeningAt = Date.now();
        }
      }
    };
    this.child.stdout!.setEncoding('utf8').on('data', onData);
    this.child.stderr!.setEncoding('utf8').on('data', onData);
    this.timer = setTimeout(() => this.child.kill('SIGKILL'), CHILD_HARD_LIMIT_MS);
    this.exited = new Promise<Exit>((resolveExit) => {
      this.child.on('close', (code, signal) => {
        clearTimeout(this.timer);
        children.delete(this.child);
        this.exitedAt = Date.now();
        if (this.partial !== '') this.lines.push({ at: this.exitedAt, text: this.partial });
        this.saveLog();
        resolveExit({ code, signal });
      });
    });
  }

  get alive(): boolean {
    return this.exitedAt === null;
  }

  /** Waits until listening (port) or exit or `timeoutMs`; returns the port or null. */
  async listening(timeoutMs: number): Promise<number | null> {
    const deadline = Date.now() + timeoutMs;
    while (this.port === null && this.alive && Date.now() < deadline) await sleep(10);
    return this.port;
  }

  /** The start-up refusal code (`Leaf failed to start: [CODE] ...`), if any. */
  get refusal(): string | null {
    const match = /Leaf failed to start: (\[[A-Z_]+\])?(.*)/.exec(this.output);
    return match ? (match[1] ?? match[2].slice(0, 80)) : null;
  }

  kill9(): void {
    this.child.kill('SIGKILL');
  }

  /** Graceful stop (SIGTERM), SIGKILL after `graceMs`. */
  async stop(graceMs = 10_000): Promise<void> {
    if (!this.alive) return;
    this.child.kill('SIGTERM');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), graceMs);
    await this.exited;
    clearTimeout(timer);
  }

  saveLog(): void {
    writeFileSync(this.logFile, this.output);
  }

  /**
   * Warnings, errors and a few telling lines of the log (one of each kind), without Nest's
   * prefix, each with its arrival time relative to `since` (default: spawn).
   */
  notable(since = this.spawnedAt, max = 14): string[] {
    const unique = new Map<string, string>();
    for (const { at, text } of this.lines) {
      if (!/WARN|ERROR|failed to start|Waited|Liveness|expired|session|revok/i.test(text)) continue;
      const line = text.replace(/^\[Nest\]\s+\d+\s+-\s+.*?\s(?=(LOG|WARN|ERROR)\s)/, '');
      const key = line.replace(/\d+/g, '#');
      if (unique.has(key)) continue;
      const clipped = line.length > 240 ? `${line.slice(0, 237)}...` : line;
      const seconds = (at - since) / 1000;
      unique.set(key, `${seconds < 0 ? '' : '+'}${seconds.toFixed(1)}s ${clipped}`);
    }
    const lines = [...unique.values()];
    return lines.length > max
      ? [...lines.slice(0, max), `... (${lines.length - max} more kinds)`]
      : lines;
  }
}

// ---------------------------------------------------------------------------------------
// HTTP

function sleep(ms: number): Promise<void> {
  return new Promise((resolveSleep) => setTimeout(resolveSleep, ms));
}

interface Answer {
  /** HTTP status; 0 when no answer (connection refused, timeout). */
  status: number;
  /** The `code` of a JSON error body, or a transport error's name. */
  code: string | null;
}

async function getId(port: number): Promise<Answer> {
  try {
    const response = await fetch(`http://127.0.0.1:${port}/api/snowflake/get/k`, {
      signal: AbortSignal.timeout(2000),
    });
    const body = await response.text();
    if (response.status === 200) return { status: 200, code: null };
    let code: string | null = null;
    try {
      const parsed = JSON.parse(body) as { code?: unknown };
      code = typeof parsed.code === 'string' ? parsed.code : null;
    } catch {
      code = body.slice(0, 60);
    }
    return { status: response.status, code };
  } catch (error) {
    return { status: 0, code: error instanceof Error ? error.name : 'ERROR' };
  }
}

const POLL_MS = 50;

/**
 * Polls every {@link POLL_MS} until `until(answer)` or `timeoutMs`; returns the matching
 * answer and when it came, or null on timeout. Counts every answer by status/code.
 */
async function pollUntil(
  port: number,
  timeoutMs: number,
  until: (answer: Answer) => boolean,
  tally?: Map<string, number>,
): Promise<{ answer: Answer; at: number } | null> {
  const deadline = Date.now() + timeoutMs;
  const maxPolls = Math.ceil(timeoutMs / POLL_MS) + 10;
  for (let polls = 0; polls < maxPolls && Date.now() < deadline; polls++) {
    const startedAt = Date.now();
    const answer = await getId(port);
    const at = Date.now();
    if (tally) {
      const key = answer.status === 200 ? '200' : `${answer.status} ${answer.code ?? ''}`.trim();
      tally.set(key, (tally.get(key) ?? 0) + 1);
    }
    if (until(answer)) return { answer, at };
    await sleep(Math.max(0, POLL_MS - (at - startedAt)));
  }
  return null;
}

function tallyText(tally: Map<string, number>): string {
  return [...tally].map(([key, count]) => `${key} x${count}`).join(', ') || '-';
}

// ---------------------------------------------------------------------------------------
// Scenarios

interface Row {
  scenario: string;
  figures: string[];
}

class Bench {
  readonly runDir = mkdtempSync(join(tmpdir(), 'leaf-avail-'));
  readonly rows: Row[] = [];
  readonly namespaces: string[] = [];
  readonly negotiatedTimeouts = new Set<string>();
  private seq = 0;

  constructor(
    readonly args: Args,
    /** Where the progress lines go (stdout when run alone, stderr in the table run). */
    readonly log: (line: string) => void = (line) => console.log(line),
  ) {}

  /** A fresh namespace, identity, state dir and proxy for one scenario. */
  async setup(tag: string): Promise<{
    proxy: TcpProxy;
    env: (stateDir: string) => Record<string, string>;
    stateDir: () => string;
  }> {
    const name = `avail-${tag}-${randomBytes(4).toString('hex')}`;
    this.namespaces.push(name);
    const proxy = new TcpProxy({ host: this.args.zkHost, port: this.args.zkPort });
    await proxy.start();
    const identityPort = 20_000 + Math.floor(Math.random() * 40_000);
    const stateDir = (): string => {
      const dir = join(this.runDir, `state-${tag}-${++this.seq}`);
      mkdirSync(dir);
      return dir;
    };
    const env = (dir: string): Record<string, string> => ({
      PORT: '0',
      HOST: '127.0.0.1',
      LEAF_SEGMENT_ENABLED: 'false',
      LEAF_SNOWFLAKE_ENABLED: 'true',
      LEAF_ZK_ADDRESS: `127.0.0.1:${proxy.port}`,
      LEAF_NAME: name,
      LEAF_SNOWFLAKE_ADVERTISE: `127.0.0.1:${identityPort}`,
      LEAF_STATE_DIR: dir,
      LEAF_SNOWFLAKE_STARTUP_MAX_WAIT_MS: '120000',
    });
    this.log(`  namespace /snowflake/${name}, identity 127.0.0.1:${identityPort}`);
    return { proxy, env, stateDir };
  }

  spawn(label: string, env: Record<string, string>): LeafProcess {
    const file = join(this.runDir, `${label}.log`);
    return new LeafProcess(label, this.args.root, env, file);
  }

  noteTimeouts(processes: LeafProcess[]): void {
    for (const app of processes) {
      for (const match of app.output.matchAll(/session 0x[0-9a-f]+, timeout (\d+) ms/g)) {
        this.negotiatedTimeouts.add(match[1]);
      }
    }
  }

  report(app: LeafProcess, since?: { at: number; what: string }): void {
    const lines = app.notable(since?.at);
    if (lines.length === 0) return;
    this.log(
      `  -- ${app.label} log (one line of each kind; times since ${since?.what ?? 'its spawn'}):`,
    );
    for (const line of lines) this.log(`     ${line}`);
  }

  /** Starts A, waits until listening, serves for `serveMs`; returns A or throws. */
  async startServing(label: string, env: Record<string, string>, serveMs: number) {
    const a = this.spawn(label, env);
    const port = await a.listening(150_000);
    if (port === null) {
      await a.stop();
      this.report(a);
      throw new Error(`${label} did not start (refusal: ${a.refusal ?? 'none'})`);
    }
    const listenMs = a.listeningAt! - a.spawnedAt;
    const tally = new Map<string, number>();
    await pollUntil(port, serveMs, () => false, tally);
    this.log(
      `  ${label}: listening after ${listenMs} ms; served ${tally.size ? tallyText(tally) : '-'}`,
    );
    return { a, port, listenMs, tally };
  }

  async restartAfterKill(run: number, freshStateDir: boolean): Promise<void> {
    const scenario = freshStateDir
      ? '2. kill -9, restart on another host (empty state dir, same ip:port)'
      : '1. kill -9, restart with same identity and state dir';
    const tag = `${freshStateDir ? 's2' : 's1'}r${run}`;
    this.log(`\n== ${scenario} (run ${run})`);
    const { proxy, env, stateDir } = await this.setup(tag);
    const dirA = stateDir();
    const processes: LeafProcess[] = [];
    let killedAt = 0;
    try {
      const { a } = await this.startServing(`${tag}-A`, env(dirA), 3000);
      processes.push(a);
      killedAt = Date.now();
      a.kill9();
      const b = this.spawn(`${tag}-B`, env(freshStateDir ? stateDir() : dirA));
      processes.push(b);
      await a.exited;
      const port = await b.listening(200_000);
      const figures: string[] = [];
      if (port === null) {
        figures.push(
          `B never listened (refusal: ${b.refusal ?? 'none'}, exit ${b.exitedAt !== null ? 'yes' : 'no'})`,
        );
      } else {
        const listenMs = b.listeningAt! - b.spawnedAt;
        const tally = new Map<string, number>();
        const first = await pollUntil(port, 60_000, (answer) => answer.status === 200, tally);
        figures.push(
          `kill -> B first ID: ${first ? `${first.at - killedAt} ms` : 'none within 60 s after listening'}`,
        );
        figures.push(`B spawn -> listening: ${listenMs} ms`);
        if (tally.size > 1 || !tally.has('200'))
          figures.push(`B answers before first ID: ${tallyText(tally)}`);
        const waited = /Waited (\d+) ms for the clock/.exec(b.output);
        if (waited) figures.push(`B logged clock wait: ${waited[1]} ms`);
      }
      for (const figure of figures) this.log(`  ${figure}`);
      this.rows.push({ scenario: `${scenario} [run ${run}]`, figures });
    } finally {
      for (const app of processes) await app.stop();
      await proxy.stop();
      this.noteTimeouts(processes);
      for (const app of processes) {
        this.report(app, app === processes[1] ? { at: killedAt, what: 'the kill' } : undefined);
      }
    }
  }

  async zookeeperCut(run: number): Promise<void> {
    const scenario = '3. ZooKeeper cut-off ride-out (proxy refuses all connections)';
    const tag = `s3r${run}`;
    this.log(`\n== ${scenario} (run ${run})`);
    const { proxy, env, stateDir } = await this.setup(tag);
    const processes: LeafProcess[] = [];
    const figures: string[] = [];
    let cutAt = 0;
    try {
      const { a, port } = await this.startServing(`${tag}-A`, env(stateDir()), 3000);
      processes.push(a);
      cutAt = Date.now();
      proxy.refuse(true);
      const duringCut = new Map<string, number>();
      const failed = await pollUntil(port, 150_000, (answer) => answer.status !== 200, duringCut);
      if (failed) {
        figures.push(
          `cut -> first non-200: ${failed.at - cutAt} ms (${failed.answer.status} ${failed.answer.code ?? ''})`.trim(),
        );
      } else {
        figures.push('cut -> first non-200: none within 150 s (still serving)');
      }
      // Keep polling a moment to see whether the failure is steady, then restore.
      const settle = new Map<string, number>();
      if (failed) await pollUntil(port, 1000, () => false, settle);
      const restoredAt = Date.now();
      proxy.refuse(false);
      const afterRestore = new Map<string, number>();
      const back = await pollUntil(port, 60_000, (answer) => answer.status === 200, afterRestore);
      if (!failed) {
        figures.push(`after restore: ${back ? 'serving' : 'NOT serving within 60 s'}`);
      } else {
        figures.push(
          `restore -> serving again: ${back ? `${back.at - restoredAt} ms` : 'never within 60 s'}`,
        );
        figures.push(
          `first non-200 -> serving again (proxy restored 1 s after it): ${back ? `${back.at - failed.at} ms` : '> 60 s'}`,
        );
      }
      figures.push(`answers during cut: ${tallyText(duringCut)}`);
      if (afterRestore.size > 0) figures.push(`answers after restore: ${tallyText(afterRestore)}`);
      if (!a.alive) figures.push(`A exited during the scenario`);
      for (const figure of figures) this.log(`  ${figure}`);
      this.rows.push({ scenario: `${scenario} [run ${run}]`, figures });
    } finally {
      proxy.refuse(false);
      for (const app of processes) await app.stop();
      await proxy.stop();
      this.noteTimeouts(processes);
      for (const app of processes) this.report(app, { at: cutAt, what: 'the cut' });
    }
  }

  /** Deletes the namespaces this run created (directly, not through a proxy). */
  async cleanUp(): Promise<void> {
    const client = new ZookeeperClient({
      connect: `${this.args.zkHost}:${this.args.zkPort}`,
      sessionTimeoutMs: 10_000,
    });
    try {
      await client.connect(10_000);
      for (const name of this.namespaces) await deleteTree(client, `/snowflake/${name}`);
    } catch (error) {
      this.log(`(could not clean up the ZooKeeper namespaces: ${String(error)})`);
    } finally {
      await client.close();
    }
  }
}

// ---------------------------------------------------------------------------------------

/** Runs every selected scenario against `args.root`; returns the errors. */
async function measure(bench: Bench, args: Args): Promise<string[]> {
  bench.log(`\nSnowflake availability bench: root ${args.root}`);
  bench.log(`ZooKeeper 127.0.0.1:${args.zkPort} (through a cuttable TCP proxy per scenario)`);
  bench.log(`logs in ${bench.runDir}`);
  const errors: string[] = [];
  for (let run = 1; run <= args.repeat; run++) {
    const steps: [number, () => Promise<void>][] = [
      [1, () => bench.restartAfterKill(run, false)],
      [2, () => bench.restartAfterKill(run, true)],
      [3, () => bench.zookeeperCut(run)],
    ];
    for (const [number, step] of steps) {
      if (!args.only.has(number)) continue;
      try {
        await step();
      } catch (error) {
        const message = `scenario ${number} run ${run}: ${error instanceof Error ? error.message : String(error)}`;
        bench.log(`  FAILED: ${message}`);
        errors.push(message);
        bench.rows.push({ scenario: `${number}. [run ${run}]`, figures: [`FAILED: ${message}`] });
      }
    }
  }
  await bench.cleanUp();
  // Keep the logs, drop the state dirs.
  for (const entry of readdirSync(bench.runDir)) {
    if (entry.startsWith('state-'))
      rmSync(join(bench.runDir, entry), { recursive: true, force: true });
  }
  return errors;
}

function printSummary(label: string, bench: Bench): void {
  const negotiated = [...bench.negotiatedTimeouts].join('/') || '?';
  console.log(`\n== Summary: ${label} (${bench.args.root})`);
  console.log(
    `ZooKeeper session timeout 10 s requested (negotiated ${negotiated} ms per the app log), ` +
      'time lease 10 s, heartbeat 3 s, local runway 60 s, startup max wait 120 s (set by this bench)',
  );
  const width = Math.max(...bench.rows.map((row) => row.scenario.length), 10);
  for (const row of bench.rows) {
    row.figures.forEach((figure, index) => {
      console.log(`${(index === 0 ? row.scenario : '').padEnd(width)} | ${figure}`);
    });
  }
  console.log(`logs: ${bench.runDir}`);
}

/** The scenarios against this checkout, as rows of `npm run bench -- --with snowflake-availability`. */
export const bench: BenchModule = {
  name: 'snowflake-availability',
  title: 'Snowflake availability (ZooKeeper)',
  async run(context) {
    const zk = /^(?:127\.0\.0\.1|localhost):(\d+)$/.exec(zookeeperConnectString());
    const args = parseArgs(zk ? ['--zk', `127.0.0.1:${zk[1]}`] : []);
    // Quick: the restart after kill -9 only (the cut-off rides out a 60 s runway).
    if (context.quick) args.only = new Set([1]);
    const availability = new Bench(args, context.log);
    try {
      await measure(availability, args);
    } finally {
      killAllChildren();
    }
    return availability.rows.map((row) => {
      const failed = row.figures.some((figure) => figure.startsWith('FAILED'));
      return {
        measurement: row.scenario.replace(/ \[run \d+\]$/, ''),
        figure: row.figures.join('; '),
        baseline: '—',
        ratio: '—',
        target: failed ? 'runs' : '—',
        met: failed ? false : null,
      };
    });
  },
};

async function main(): Promise<void> {
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.on(signal, () => {
      killAllChildren();
      process.exit(130);
    });
  }
  const args = parseArgs(process.argv.slice(2));
  const runs: Array<[string, Bench]> = [];
  if (args.baseline !== null)
    runs.push(['baseline', new Bench({ ...args, root: args.baseline, baseline: null })]);
  runs.push(['this checkout', new Bench(args)]);
  const errors: string[] = [];
  for (const [, bench] of runs) errors.push(...(await measure(bench, bench.args)));
  for (const [label, bench] of runs) printSummary(label, bench);
  if (errors.length > 0) process.exitCode = 1;
}

if (require.main === module) {
  main()
    .catch((error: unknown) => {
      console.error(error);
      process.exitCode = 1;
    })
    .finally(killAllChildren);
}
