import { existsSync, readdirSync, statSync } from 'node:fs';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';

/** The repository root: the child runs from there, as `npm start` would. */
const ROOT = join(__dirname, '..', '..');

/** The application as a real process: `src/main.ts` through ts-node (no build needed). */
export const APP_ARGS = [
  '-r',
  'ts-node/register/transpile-only',
  '-r',
  'tsconfig-paths/register',
  'src/main.ts',
];

/** The built application (`npm run build`): starts in a fraction of ts-node's time. */
export const BUILT_APP_ARGS = ['dist/src/main.js'];

/** Newest modification time of the `.ts` files under `dir` (0 when there are none). */
export function newestSource(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestSource(path));
    else if (entry.name.endsWith('.ts')) newest = Math.max(newest, statSync(path).mtimeMs);
  }
  return newest;
}

/**
 * True when the build (`npm run build`: dist/ and libs/leaf/dist/) is newer than every source
 * file of the application and the library, so a stale build never stands in for the code
 * under test.
 */
export function buildIsFresh(): boolean {
  const app = join(ROOT, 'dist', 'src', 'main.js');
  const lib = join(ROOT, 'libs', 'leaf', 'dist', 'index.js');
  if (!existsSync(app) || !existsSync(lib)) return false;
  const built = Math.min(statSync(app).mtimeMs, statSync(lib).mtimeMs);
  const sources = Math.max(
    newestSource(join(ROOT, 'src')),
    newestSource(join(ROOT, 'libs', 'leaf', 'src')),
  );
  return built > sources;
}

/**
 * {@link BUILT_APP_ARGS} when the build is fresh ({@link buildIsFresh}), otherwise
 * {@link APP_ARGS}.
 */
export function freshestAppArgs(): string[] {
  return buildIsFresh() ? BUILT_APP_ARGS : APP_ARGS;
}

/** How a script run by {@link runScript} ended. */
export interface ScriptResult {
  /** Exit code; `null` when ended by a signal or the timeout. */
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * Runs a TypeScript entry point of the repository (`src/cli.ts`, `bench/all.bench.ts`)
 * through ts-node as its npm script does, with exactly `env`, from the repository root, until
 * it exits or `timeoutMs` has passed (then it is killed). With `preferBuild`, a file of `src/`
 * runs as its build (`dist/src/….js`) when the build is fresh ({@link buildIsFresh}), as
 * its npm script runs it after `npm run build`. Never rejects.
 */
export function runScript(
  file: string,
  args: string[],
  options: { env: NodeJS.ProcessEnv; timeoutMs: number; preferBuild?: boolean },
): Promise<ScriptResult> {
  const tsNode = ['-r', 'ts-node/register/transpile-only', '-r', 'tsconfig-paths/register'];
  const built = options.preferBuild && /^src\/.*\.ts$/.test(file) && buildIsFresh();
  const node = built ? [join('dist', file.replace(/\.ts$/, '.js'))] : [...tsNode, file];
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [...node, ...args],
      { cwd: ROOT, env: options.env, timeout: options.timeoutMs, maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : null) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

/** How a child process ended, with everything it wrote. */
export interface ProcessExit {
  /** Exit code; `null` when ended by a signal. */
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
  /** True when the spec's timeout killed it. */
  readonly timedOut: boolean;
  /** From spawn to exit. */
  readonly durationMs: number;
}

const running = new Set<ChildProcess>();

/**
 * The environment of the child: the parent's, minus every variable the application reads
 * (`LEAF_*`, `PORT`, `HOST`) so that nothing from the test runner's shell leaks in, plus
 * `env`. Colours off, so the logs can be matched as plain text.
 */
function childEnv(env: Record<string, string>): NodeJS.ProcessEnv {
  const base: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (!/^(LEAF_|PORT$|HOST$)/.test(name)) base[name] = value;
  }
  return { ...base, NO_COLOR: '1', ...env };
}

/**
 * A running application process (the fresh build or `src/main.ts`) started with `env`. Its output is
 * collected; {@link AppProcess.exited} resolves (never rejects) when it ends, and it is
 * killed with SIGKILL if it outlives `timeoutMs`.
 */
export class AppProcess {
  /** Everything written to stdout so far. */
  stdout = '';
  /** Everything written to stderr so far. */
  stderr = '';
  /** Resolves when the process has ended. */
  readonly exited: Promise<ProcessExit>;
  private readonly child: ChildProcess;
  private readonly outputListeners = new Set<() => void>();

  private constructor(env: Record<string, string>, timeoutMs: number, args: readonly string[]) {
    const startedAt = Date.now();
    this.child = spawn(process.execPath, args, {
      cwd: ROOT,
      env: childEnv(env),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    running.add(this.child);
    this.child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      this.stdout += chunk;
      for (const listener of this.outputListeners) listener();
    });
    this.child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
      this.stderr += chunk;
      for (const listener of this.outputListeners) listener();
    });
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      this.child.kill('SIGKILL');
    }, timeoutMs);
    this.exited = new Promise<ProcessExit>((resolve) => {
      // 'close', not 'exit': by then both pipes are drained, so the output is complete.
      this.child.on('close', (code, signal) => {
        clearTimeout(timer);
        running.delete(this.child);
        for (const listener of this.outputListeners) listener();
        resolve({
          code,
          signal,
          stdout: this.stdout,
          stderr: this.stderr,
          timedOut,
          durationMs: Date.now() - startedAt,
        });
      });
    });
  }

  /**
   * Starts the application with `env`; see the class. `args` are node's arguments (default
   * {@link freshestAppArgs}: `dist/src/main.js` when the build is fresh, as `npm start` runs
   * it, else ts-node on `src/main.ts`).
   */
  static spawn(
    env: Record<string, string>,
    options: { timeoutMs?: number; args?: readonly string[] } = {},
  ): AppProcess {
    return new AppProcess(env, options.timeoutMs ?? 30_000, options.args ?? freshestAppArgs());
  }

  /**
   * Runs the application with `env` until it exits by itself (a start-up refusal), or is
   * killed after `timeoutMs`.
   */
  static run(
    env: Record<string, string>,
    options: { timeoutMs?: number } = {},
  ): Promise<ProcessExit> {
    return AppProcess.spawn(env, options).exited;
  }

  /** The process ID. */
  get pid(): number {
    return this.child.pid!;
  }

  /** True until the process has ended. */
  get alive(): boolean {
    return running.has(this.child);
  }

  /**
   * Resolves with the port from the `Leaf listening on http://host:port` line of `main.ts`;
   * rejects with the output so far if the process exits first.
   */
  async listening(): Promise<number> {
    const exitedFirst = this.exited.then((exit) => {
      throw new Error(
        `the application exited (code ${exit.code}, signal ${exit.signal}${exit.timedOut ? ', timed out' : ''}) ` +
          `before listening.\nstdout:\n${exit.stdout}\nstderr:\n${exit.stderr}`,
      );
    });
    const port = new Promise<number>((resolve) => {
      const check = (): void => {
        // A JSON log line's `msg` (or plain text): the URL ends at whitespace or the closing quote.
        const match = /Leaf listening on https?:\/\/[^\s"]+:(\d+)/.exec(this.stdout);
        if (match) {
          this.outputListeners.delete(check);
          resolve(Number(match[1]));
        }
      };
      this.outputListeners.add(check);
      check();
    });
    try {
      return await Promise.race([port, exitedFirst]);
    } finally {
      exitedFirst.catch(() => undefined);
    }
  }

  /** Sends `signal` without waiting (SIGSTOP / SIGCONT pause and resume the process). */
  signal(signal: NodeJS.Signals): void {
    if (this.alive) this.child.kill(signal);
  }

  /** Sends `signal` (SIGTERM: graceful shutdown) and waits for the exit. */
  stop(signal: NodeJS.Signals = 'SIGTERM'): Promise<ProcessExit> {
    if (this.alive) this.child.kill(signal);
    return this.exited;
  }
}

/** Kills (SIGKILL) every application process still running and waits until they are gone. */
export async function killAllAppProcesses(): Promise<void> {
  const children = [...running];
  await Promise.all(
    children.map(
      (child) =>
        new Promise<void>((resolve) => {
          child.once('close', () => resolve());
          child.kill('SIGCONT'); // a paused child would not die of SIGKILL before it resumes
          child.kill('SIGKILL');
        }),
    ),
  );
}
