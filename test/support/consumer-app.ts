/**
 * A user's application made the way libs/leaf/README.md says, for the consumer tests
 * (test/consumer-apps/): scaffolded by the Nest CLI from the registry, the packed library
 * installed with the README's own install commands, the README's setup files written in,
 * built with the app's own build script and run as a real process, all on a chosen Node.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { ROOT } from './packed-library';

/** A Node installation the app is installed, built and run with. */
export interface NodeRuntime {
  /** Directory of its `node` binary (first on the children's PATH). */
  readonly bin: string;
  /** `process.versions.node` of that binary. */
  readonly version: string;
  /** Its headers for node-gyp (`npm_config_nodedir`: `<bin>/../include/node`), when present. */
  readonly nodedir?: string;
}

/**
 * The newest Node `major` through scripts/node24.sh: the machine's own Node when its major
 * is `major`, otherwise the registry's official build (installed once into ~/.cache).
 */
export function nodeRuntime(major: number): NodeRuntime {
  const machineMajor = Number(process.versions.node.split('.')[0]);
  const bin =
    machineMajor === major
      ? dirname(process.execPath)
      : execFileSync('bash', [join(ROOT, 'scripts', 'node24.sh')], {
          encoding: 'utf8',
          env: { ...process.env, LEAF_NODE_MAJOR: String(major), LEAF_NODE_FORCE_INSTALL: '1' },
        }).trim();
  const version = execFileSync(join(bin, 'node'), ['-p', 'process.versions.node'], {
    encoding: 'utf8',
  }).trim();
  const home = dirname(bin);
  const nodedir = existsSync(join(home, 'include', 'node')) ? home : undefined;
  return { bin, version, nodedir };
}

/**
 * The environment of every child: the runner's, minus npm's own variables (an `npm run`
 * parent exports its prefix and configuration), `LEAF_*` and `NODE_ENV`; `node` first on
 * PATH; npm told to prefer its cache (~/.npm already holds what the repository's install
 * fetched) and to skip the audit and funding requests.
 */
export function childEnv(node: NodeRuntime, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (!/^(npm_|LEAF_|NODE_ENV$|NODE_OPTIONS$|INIT_CWD$|PORT$)/i.test(name)) env[name] = value;
  }
  return {
    ...env,
    PATH: [node.bin, ...ccachePath(), process.env.PATH ?? ''].join(':'),
    ...ccacheEnv(),
    ...(node.nodedir ? { npm_config_nodedir: node.nodedir } : {}),
    npm_config_prefer_offline: 'true',
    npm_config_audit: 'false',
    npm_config_fund: 'false',
    npm_config_update_notifier: 'false',
    NO_COLOR: '1',
    ...extra,
  };
}

/** Debian's ccache compiler links (`scripts/services.sh ccache`), when installed. */
const CCACHE_LINKS = '/usr/lib/ccache';

/**
 * Every install builds the native addons from source (no prebuilt binary is reachable for
 * better-sqlite3, none exists for zookeeper): minutes of C per app. Through ccache's
 * compiler links the same sources are compiled once per Node version and machine.
 */
function ccachePath(): string[] {
  return existsSync(join(CCACHE_LINKS, 'gcc')) ? [CCACHE_LINKS] : [];
}

/** Each app is installed in a fresh temporary directory: hash paths relative to it. */
function ccacheEnv(): Record<string, string> {
  return ccachePath().length > 0 ? { CCACHE_BASEDIR: tmpdir(), CCACHE_NOHASHDIR: 'true' } : {};
}

/** How a command ran. */
export interface CommandRun {
  readonly argv: readonly string[];
  readonly ms: number;
  readonly output: string;
}

/** Runs `argv` in `cwd`; rejects with its output when it fails or outlives `timeoutMs`. */
export function run(
  argv: readonly string[],
  options: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs: number },
): Promise<CommandRun> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const child = spawn(argv[0], argv.slice(1), {
      cwd: options.cwd,
      env: options.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      const ms = Date.now() - started;
      if (code === 0) resolve({ argv, ms, output });
      else
        reject(
          new Error(
            `\`${argv.join(' ')}\` in ${options.cwd} ended with ${code ?? signal} after ${ms} ms:\n${output.slice(-6000)}`,
          ),
        );
    });
  });
}

/** Writes `files` (path relative to `dir` → content) into `dir`. */
export function writeFiles(dir: string, files: Record<string, string>): void {
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), content);
  }
}

/** `version` of the package `name` installed in `dir`'s node_modules. */
export function installedVersion(dir: string, name: string): string {
  return (
    JSON.parse(readFileSync(join(dir, 'node_modules', name, 'package.json'), 'utf8')) as {
      version: string;
    }
  ).version;
}

/** A running app process. */
export class RunningApp {
  private output = '';
  private readonly exited: Promise<void>;

  private constructor(
    private readonly child: ChildProcess,
    readonly base: string,
  ) {
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (this.output += chunk));
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (this.output += chunk));
    this.exited = new Promise((resolve) => child.once('close', () => resolve()));
  }

  /**
   * Runs `node <app>/dist/main.js` (the scaffold's `start:prod`) from `cwd` with `env`, on
   * `port`; resolves once it answers HTTP, rejects with its output when it exits first or
   * does not answer within `timeoutMs`.
   */
  static async start(
    app: string,
    options: { node: NodeRuntime; cwd: string; port: number; env: Record<string, string> },
    timeoutMs = 60_000,
  ): Promise<RunningApp> {
    mkdirSync(options.cwd, { recursive: true });
    const child = spawn(join(options.node.bin, 'node'), [join(app, 'dist', 'main.js')], {
      cwd: options.cwd,
      env: childEnv(options.node, { ...options.env, PORT: String(options.port) }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const started = new RunningApp(child, `http://127.0.0.1:${options.port}`);
    const deadline = Date.now() + timeoutMs;
    let gone = false;
    void started.exited.then(() => (gone = true));
    while (!gone && Date.now() < deadline) {
      try {
        await fetch(`${started.base}/health`);
        return started;
      } catch {
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
    }
    await started.stop();
    throw new Error(
      `the app ${gone ? 'exited' : `did not answer within ${timeoutMs} ms`}:\n${started.output.slice(-6000)}`,
    );
  }

  /** Everything it wrote so far. */
  log(): string {
    return this.output;
  }

  /** SIGTERM (the shutdown hooks run), SIGKILL after 15 s. */
  async stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    this.child.kill('SIGTERM');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 15_000);
    await this.exited;
    clearTimeout(timer);
  }

  /** GET `path`: status, content type, `X-Powered-By` and the body (parsed when JSON). */
  async get(path: string): Promise<{
    status: number;
    type: string | null;
    poweredBy: string | null;
    body: unknown;
  }> {
    const response = await fetch(`${this.base}${path}`);
    const text = await response.text();
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      // not JSON: kept as text
    }
    return {
      status: response.status,
      type: response.headers.get('content-type'),
      poweredBy: response.headers.get('x-powered-by'),
      body,
    };
  }
}

/** The wall time of each step of a consumer test, printed at its end. */
export class StepTimes {
  private readonly steps: Array<[string, number]> = [];

  /** Runs `work`, recording its wall time under `step` (whether it succeeds or not). */
  async timed<T>(step: string, work: () => Promise<T>): Promise<T> {
    const started = Date.now();
    try {
      return await work();
    } finally {
      this.record(step, Date.now() - started);
    }
  }

  record(step: string, ms: number): void {
    this.steps.push([step, ms]);
  }

  /** `title` and one line per step, for the log. */
  report(title: string): string {
    return (
      `[consumer] ${title}: wall times\n` +
      this.steps
        .map(([step, ms]) => `  ${(ms / 1000).toFixed(1).padStart(7)} s  ${step}`)
        .join('\n')
    );
  }
}
