/**
 * N application processes under test, each with a stable name (`p0`, `p1`...) that stays
 * across restarts, its own state directory and its own port; kill -9, SIGSTOP/SIGCONT and
 * restart per instance. Built on {@link AppProcess} (the built app when it is fresh).
 */
import { AppProcess, freshestAppArgs, type ProcessExit } from '../../support/app-process';
import { tempDir } from '../../support/app';
import type { LoadTarget } from './load';

/** Settings of a {@link Cluster}. */
export interface ClusterOptions {
  /** Number of instances. */
  readonly size: number;
  /**
   * The environment of instance `name` (index `index`), merged over the defaults: port 0 on
   * 127.0.0.1, no access log, `LEAF_STATE_DIR` a private temporary directory.
   */
  readonly env: (name: string, index: number) => Record<string, string>;
  /** How long one start may take before it counts as failed. @default 60_000 */
  readonly startTimeoutMs?: number;
  /** A process still running after this long is killed. @default 900_000 */
  readonly lifetimeMs?: number;
  /** Node's arguments. @default freshestAppArgs() */
  readonly args?: readonly string[];
  /**
   * `quiet`: `HOST=127.0.0.1` and `LEAF_ACCESS_LOG=false` under `env` (a long load writes no
   * access log to keep in memory). `deployer`: nothing but `PORT=0` and `LEAF_STATE_DIR`
   * under `env`, every other variable unset, as a deployer who sets only what the
   * deployment needs (the access log off, its default). @default 'quiet'
   */
  readonly defaults?: 'quiet' | 'deployer';
}

/** One application instance of a {@link Cluster}; a {@link LoadTarget}. */
export class ClusterInstance implements LoadTarget {
  private process: AppProcess | null = null;
  private port: number | null = null;
  private paused = false;
  /** Output of the incarnations that ended, for diagnosis. */
  private readonly pastOutput: string[] = [];
  private readonly stateDir = tempDir('leaf-system');
  /** Times this instance was started. */
  starts = 0;

  constructor(
    /** `p0`, `p1`... */
    readonly name: string,
    private readonly env: Record<string, string>,
    private readonly options: Required<Omit<ClusterOptions, 'env' | 'size'>>,
  ) {}

  /**
   * One instance on its own, outside a {@link Cluster} (e.g. a new identity per start);
   * options as {@link ClusterOptions}.
   */
  static create(
    name: string,
    env: Record<string, string>,
    options: Omit<ClusterOptions, 'env' | 'size'> = {},
  ): ClusterInstance {
    return new ClusterInstance(name, env, settingsOf(options));
  }

  /** `http://127.0.0.1:<port>` while listening (also while paused), else `null`. */
  baseUrl(): string | null {
    return this.port === null ? null : `http://127.0.0.1:${this.port}`;
  }

  /** True while a process of this instance runs. */
  get running(): boolean {
    return this.process?.alive ?? false;
  }

  /** The process ID of the running incarnation. */
  get pid(): number | null {
    return this.running ? this.process!.pid : null;
  }

  /** stdout and stderr of every incarnation so far. */
  get output(): string {
    const current = this.process ? [this.process.stdout, this.process.stderr] : [];
    return [...this.pastOutput, ...current].join('\n');
  }

  /**
   * Waits until `test(output)` holds, at most `timeoutMs`; resolves with whether it did. Log
   * lines are written in batches (at most 250 ms old), so a line can lag the event it reports.
   */
  async waitForOutput(test: (output: string) => boolean, timeoutMs: number): Promise<boolean> {
    const until = Date.now() + timeoutMs;
    while (!test(this.output)) {
      if (Date.now() >= until) return false;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    return true;
  }

  /** The state directory (`LEAF_STATE_DIR` unless the env set another). */
  get statePath(): string {
    return this.stateDir.path;
  }

  /**
   * Starts a new incarnation and waits until it listens.
   * @throws when it exits or does not listen within `startTimeoutMs` (it is then killed).
   */
  async start(extraEnv: Record<string, string> = {}): Promise<void> {
    if (this.running) throw new Error(`${this.name} is already running`);
    this.retire();
    const quiet: Record<string, string> =
      this.options.defaults === 'quiet' ? { HOST: '127.0.0.1', LEAF_ACCESS_LOG: 'false' } : {};
    const child = AppProcess.spawn(
      {
        PORT: '0',
        ...quiet,
        LEAF_STATE_DIR: this.stateDir.path,
        ...this.env,
        ...extraEnv,
      },
      { timeoutMs: this.options.lifetimeMs, args: this.options.args },
    );
    this.process = child;
    this.starts++;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        child.signal('SIGKILL');
        reject(new Error(`${this.name} did not listen within ${this.options.startTimeoutMs} ms`));
      }, this.options.startTimeoutMs);
    });
    try {
      this.port = await Promise.race([child.listening(), timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Graceful stop (SIGTERM) and wait. */
  async stop(): Promise<ProcessExit | null> {
    return this.end('SIGTERM');
  }

  /** `kill -9` and wait until the process is gone. */
  async kill(): Promise<ProcessExit | null> {
    return this.end('SIGKILL');
  }

  /** SIGSTOP: the process freezes with its sockets open. */
  pause(): void {
    this.process?.signal('SIGSTOP');
    this.paused = true;
  }

  /** SIGCONT. */
  resume(): void {
    this.process?.signal('SIGCONT');
    this.paused = false;
  }

  /** Stops (SIGTERM, or SIGKILL with `kill`) and starts again with the same name and state. */
  async restart(options: { kill?: boolean; env?: Record<string, string> } = {}): Promise<void> {
    await this.end(options.kill ? 'SIGKILL' : 'SIGTERM');
    await this.start(options.env);
  }

  /** Kills whatever runs and removes the state directory. */
  async dispose(): Promise<void> {
    await this.end('SIGKILL');
    this.stateDir.remove();
  }

  private async end(signal: NodeJS.Signals): Promise<ProcessExit | null> {
    this.port = null;
    const child = this.process;
    if (!child || !child.alive) return null;
    // A stopped process handles no signal but SIGKILL until it is continued.
    if (this.paused) this.resume();
    return child.stop(signal);
  }

  private retire(): void {
    if (this.process) this.pastOutput.push(this.process.stdout, this.process.stderr);
    this.process = null;
  }
}

/** {@link ClusterOptions} with their defaults. */
function settingsOf(
  options: Omit<ClusterOptions, 'env' | 'size'>,
): Required<Omit<ClusterOptions, 'env' | 'size'>> {
  return {
    startTimeoutMs: options.startTimeoutMs ?? 60_000,
    lifetimeMs: options.lifetimeMs ?? 900_000,
    args: options.args ?? freshestAppArgs(),
    defaults: options.defaults ?? 'quiet',
  };
}

/** A set of {@link ClusterInstance}s started together. */
export class Cluster {
  private constructor(readonly instances: readonly ClusterInstance[]) {}

  /**
   * Creates `size` instances and starts them all at the same moment.
   * @throws when one does not start (every instance is then disposed).
   */
  static async start(options: ClusterOptions): Promise<Cluster> {
    const cluster = Cluster.create(options);
    try {
      await Promise.all(cluster.instances.map((instance) => instance.start()));
    } catch (error) {
      await cluster.dispose();
      throw error;
    }
    return cluster;
  }

  /** Creates the instances without starting them. */
  static create(options: ClusterOptions): Cluster {
    const settings = settingsOf(options);
    return new Cluster(
      Array.from({ length: options.size }, (_, index) => {
        const name = `p${index}`;
        return new ClusterInstance(name, options.env(name, index), settings);
      }),
    );
  }

  /** The instance called `name`. */
  get(name: string): ClusterInstance {
    const instance = this.instances.find((i) => i.name === name);
    if (!instance) throw new Error(`no instance ${name}`);
    return instance;
  }

  /** Kills every instance (SIGKILL) and removes their state. Safe to call twice. */
  async dispose(): Promise<void> {
    await Promise.all(this.instances.map((instance) => instance.dispose()));
  }
}
