/**
 * The application of the HTTP benchmarks, started as a deployer starts it: the build
 * (`node dist/src/main.js`), configured by environment only, with every variable the
 * application reads (`LEAF_*`, `PORT`, `HOST`, `NODE_ENV`) unset except the ones given, in an
 * empty working directory of its own (the defaults' `./data` — SQLite file, snowflake state —
 * lands there). Its stdout, the JSON logs, goes to a file in that directory, as a container
 * runtime writes a container's stdout to a file; its stderr is this process's.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createReadStream, mkdtempSync, openSync, closeSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BUILT_APP_ARGS, freshestAppArgs } from '../../test/support/app-process';

const ROOT = join(__dirname, '..', '..');

/** How long the application may take from spawn to its `Leaf listening on` line. */
const START_TIMEOUT_MS = 60_000;

/**
 * Builds the application (`npm run build`) unless `dist/` is newer than every source file of
 * the application and the library: the benchmark measures what ships, never a stale build.
 */
export function ensureBuilt(log: (line: string) => void): void {
  if (freshestAppArgs() === BUILT_APP_ARGS) return;
  log('dist/ is missing or older than the sources: npm run build');
  const result = spawnSync('npm', ['run', 'build'], { cwd: ROOT, stdio: ['ignore', 2, 2] });
  if (result.status !== 0) throw new Error(`npm run build failed (exit ${result.status})`);
}

/** This process's environment without anything the application reads, plus `env`. */
function deployerEnv(env: Record<string, string>): NodeJS.ProcessEnv {
  const base: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (!/^(LEAF_|PORT$|HOST$|NODE_ENV$)/.test(name)) base[name] = value;
  }
  return { ...base, ...env };
}

/** Counts the lines of a file without holding it in memory. */
async function countLines(path: string): Promise<{ lines: number; bytes: number }> {
  let lines = 0;
  let bytes = 0;
  for await (const chunk of createReadStream(path) as AsyncIterable<Buffer>) {
    bytes += chunk.length;
    for (let at = chunk.indexOf(10); at >= 0; at = chunk.indexOf(10, at + 1)) lines++;
  }
  return { lines, bytes };
}

/** A running application process (see the file's comment). */
export class LeafServer {
  private constructor(
    /** What it is, for the log: `default configuration`, `LEAF_ACCESS_LOG=false`. */
    readonly label: string,
    /** The port it listens on. */
    readonly port: number,
    private readonly child: ChildProcess,
    private readonly dir: string,
    private readonly stdoutPath: string,
  ) {}

  /**
   * Starts `dist/src/main.js` (or `options.main`, another checkout's build) with `env` (on top
   * of `PORT=0`), optionally through `taskset -c <cpu>`, and resolves once its `Leaf listening on` line is on its stdout.
   */
  static async start(
    label: string,
    env: Record<string, string>,
    options: { cpu: string | null; main?: string },
  ): Promise<LeafServer> {
    const dir = mkdtempSync(join(tmpdir(), 'leaf-bench-'));
    const stdoutPath = join(dir, 'stdout.log');
    const stdout = openSync(stdoutPath, 'a');
    const node = [process.execPath, options.main ?? join(ROOT, BUILT_APP_ARGS[0])];
    const [command, ...args] =
      options.cpu === null ? node : ['taskset', '-c', options.cpu, ...node];
    const child = spawn(command, args, {
      cwd: dir,
      env: deployerEnv({ PORT: '0', ...env }),
      stdio: ['ignore', stdout, 'inherit'],
    });
    closeSync(stdout);
    const started = Date.now();
    let exited: string | null = null;
    child.once('exit', (code, signal) => (exited = `code ${code}, signal ${signal}`));
    for (;;) {
      const match = /Leaf listening on http:\/\/[^\s"]+:(\d+)/.exec(
        readFileSync(stdoutPath, 'utf8'),
      );
      if (match) return new LeafServer(label, Number(match[1]), child, dir, stdoutPath);
      if (exited !== null || Date.now() - started > START_TIMEOUT_MS) {
        const output = readFileSync(stdoutPath, 'utf8').slice(-4000);
        child.kill('SIGKILL');
        rmSync(dir, { recursive: true, force: true });
        throw new Error(
          `Leaf (${label}) ${exited !== null ? `exited (${exited})` : 'did not listen in time'} before listening; stdout:\n${output}`,
        );
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  /** Its process ID. */
  get pid(): number {
    return this.child.pid!;
  }

  /** Kills the process at once (SIGKILL): for an exit of this process that cannot wait. */
  kill(): void {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGKILL');
  }

  /**
   * Stops it as an orchestrator does (SIGTERM, SIGKILL after 10 s), then counts the lines it
   * wrote to stdout and removes its directory. Resolves with the count.
   */
  async stop(): Promise<{ lines: number; bytes: number; code: number | null }> {
    const code = await new Promise<number | null>((done) => {
      if (this.child.exitCode !== null || this.child.signalCode !== null) {
        return done(this.child.exitCode);
      }
      const timer = setTimeout(() => this.child.kill('SIGKILL'), 10_000);
      this.child.once('exit', (exitCode) => {
        clearTimeout(timer);
        done(exitCode);
      });
      this.child.kill('SIGTERM');
    });
    try {
      return { ...(await countLines(this.stdoutPath)), code };
    } finally {
      rmSync(this.dir, { recursive: true, force: true });
    }
  }
}
