/**
 * The kill -9 / start cycles of the worker-ID reclaim tests (test/system/worker-reclaim.*):
 * real processes of `reclaim-worker.ts` (the library's `SnowflakeWorker.start`, the code the
 * application runs, with the real ZooKeeper client and state file) against real ZooKeeper,
 * each start with a new identity (as pods of a Deployment), at most `concurrency` alive at
 * once, every `faketimeEvery`-th start with its wall clock `faketimeOffsetMs` behind
 * (libfaketime). Every ID a process printed was handed out; all of them are checked for
 * repeats, and the harness records when each process was seen holding its worker ID.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { FaketimeClock } from './faketime';
import { sleep } from './id-load';

const ROOT = join(__dirname, '..', '..');
/** One directory per test process, so that runs in parallel do not rebuild each other's. */
const OUT_DIR = join(ROOT, 'node_modules', '.cache', `leaf-reclaim-worker-${process.pid}`);

/**
 * Compiles `reclaim-worker.ts` and the library files it imports to JavaScript (no type
 * check: `tsc` checks the sources elsewhere), under `node_modules/.cache` so that `require`
 * finds the repository's packages. A compiled process starts in about 0.2 s, ts-node in 3 s.
 * @returns the script to run with `node`.
 */
export function buildReclaimWorker(): string {
  const result = spawnSync(
    process.execPath,
    [
      join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'),
      '--noCheck',
      '--outDir',
      OUT_DIR,
      '--rootDir',
      ROOT,
      '--module',
      'commonjs',
      '--target',
      'es2022',
      '--esModuleInterop',
      '--skipLibCheck',
      '--types',
      'node',
      join(ROOT, 'test', 'support', 'reclaim-worker.ts'),
    ],
    { encoding: 'utf8', timeout: 120_000 },
  );
  if (result.status !== 0) throw new Error(`tsc failed: ${result.stdout}${result.stderr}`);
  return join(OUT_DIR, 'test', 'support', 'reclaim-worker.js');
}

/** Deletes what {@link buildReclaimWorker} compiled. */
export function removeReclaimWorker(): void {
  rmSync(OUT_DIR, { recursive: true, force: true });
}

/** Settings of one worker process (`RW_*` variables of reclaim-worker.ts). */
export interface ReclaimWorkerEnv {
  readonly RW_ZK: string;
  readonly RW_NAME: string;
  readonly RW_STATE_DIR: string;
  readonly RW_RECLAIM?: string;
  readonly RW_WORKER_BITS?: string;
  readonly RW_SESSION_TIMEOUT_MS?: string;
  readonly RW_LEASE_MS?: string;
  readonly RW_HEARTBEAT_MS?: string;
  readonly RW_MARGIN_MS?: string;
}

/** One process of reclaim-worker.ts and what it printed. */
export class ReclaimWorkerProcess {
  workerId: number | null = null;
  failure: string | null = null;
  /** When the harness saw `START` (it may issue from then on). */
  startedAt: number | null = null;
  /** When the harness saw it exit. */
  exitedAt: number | null = null;
  /** Every readiness change: `true ` or `false <reason>`. */
  readonly readiness: string[] = [];
  stderr = '';
  idCount = 0;
  readonly exited: Promise<void>;
  private readonly child: ChildProcess;
  private readonly waiters = new Set<() => void>();

  constructor(
    script: string,
    readonly identity: string,
    env: ReclaimWorkerEnv & Record<string, string>,
    /** Told of every ID printed, with the process, when printed. */
    onIds: (ids: string[], from: ReclaimWorkerProcess) => void,
  ) {
    this.child = spawn(process.execPath, [script], {
      env: { ...process.env, ...env, RW_IDENTITY: identity },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child.stderr!.setEncoding('utf8');
    this.child.stderr!.on('data', (chunk: string) => {
      if (this.stderr.length < 200_000) this.stderr += chunk;
    });
    createInterface({ input: this.child.stdout! }).on('line', (line) => {
      const [kind, ...rest] = line.split(' ');
      if (kind === 'IDS') {
        this.idCount += rest.length;
        onIds(rest, this);
      } else if (kind === 'START') {
        this.workerId = Number(rest[0]);
        this.startedAt = Date.now();
      } else if (kind === 'READY') {
        this.readiness.push(rest.join(' '));
      } else if (kind === 'FAIL') {
        this.failure = rest.join(' ');
      }
      for (const waiter of [...this.waiters]) waiter();
    });
    this.exited = new Promise((resolve) => {
      this.child.on('exit', () => {
        this.exitedAt = Date.now();
        for (const waiter of [...this.waiters]) waiter();
        resolve();
      });
    });
  }

  get pid(): number {
    return this.child.pid!;
  }

  /** Resolves once `condition` holds (checked at every line and at exit), or throws after `timeoutMs`. */
  async until(condition: () => boolean, timeoutMs: number, what: string): Promise<void> {
    if (condition()) return;
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters.delete(check);
        reject(
          new Error(
            `${this.identity}: no ${what} within ${timeoutMs} ms; stderr: ${this.stderr.slice(-2000)}`,
          ),
        );
      }, timeoutMs);
      const check = () => {
        if (!condition()) return;
        clearTimeout(timer);
        this.waiters.delete(check);
        resolve();
      };
      this.waiters.add(check);
    });
  }

  signal(signal: NodeJS.Signals): void {
    if (this.exitedAt === null) this.child.kill(signal);
  }

  /** kill -9 and wait for the exit. */
  async kill(): Promise<void> {
    this.signal('SIGKILL');
    await this.exited;
  }
}

/** Settings of {@link runReclaimCycles}. */
export interface ReclaimCyclesOptions {
  readonly script: string;
  readonly zk: string;
  readonly name: string;
  readonly cycles: number;
  /** Most processes alive at once. */
  readonly concurrency: number;
  /** Worker bits of the layout (fewer: the namespace is exhausted sooner). */
  readonly workerBits: number;
  readonly reclaim: 'when-exhausted' | 'always';
  /** Every n-th start runs with its clock `faketimeOffsetMs` behind. */
  readonly faketimeEvery: number;
  readonly faketimeOffsetMs: number;
  /** How long each process issues IDs before its kill -9 (a random time up to this). */
  readonly maxLiveMs: number;
  /** The whole run must finish within this. */
  readonly deadlineMs: number;
  readonly sessionTimeoutMs: number;
}

/** What {@link runReclaimCycles} found. */
export interface ReclaimCyclesResult {
  readonly starts: number;
  /** Refused starts by error code (none expected). */
  readonly failures: Record<string, number>;
  /** Starts that took a worker ID an earlier process had used. */
  readonly reusedWorkerIds: number;
  readonly distinctWorkerIds: number;
  readonly ids: number;
  readonly duplicates: number;
  /** Pairs of processes seen holding the same worker ID at the same time. */
  readonly overlaps: string[];
  readonly maxAlive: number;
  readonly clockBehindStarts: number;
  readonly durationMs: number;
  /** Mean time from spawn to `START`. */
  readonly meanStartMs: number;
}

/**
 * Runs `cycles` start / issue / kill -9 cycles. Each process starts with a new identity
 * (`10.<n>:<port>`), issues IDs for a random time up to `maxLiveMs` after `START`, and is
 * killed with SIGKILL; at most `concurrency` are alive at any time.
 */
export async function runReclaimCycles(
  options: ReclaimCyclesOptions,
): Promise<ReclaimCyclesResult> {
  const stateRoot = mkdtempSync(join(tmpdir(), 'leaf-reclaim-'));
  const behind = new FaketimeClock(options.faketimeOffsetMs);
  const seen = new Set<string>();
  let ids = 0;
  let duplicates = 0;
  const holders = new Map<number, ReclaimWorkerProcess[]>();
  const failures: Record<string, number> = {};
  const alive = new Set<ReclaimWorkerProcess>();
  let maxAlive = 0;
  let clockBehindStarts = 0;
  let startMsTotal = 0;
  let startCount = 0;
  const started = Date.now();
  const onIds = (batch: string[]) => {
    for (const id of batch) {
      ids++;
      if (seen.has(id)) duplicates++;
      else seen.add(id);
    }
  };

  const cycle = async (n: number): Promise<void> => {
    const identity = `10.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}:${8000 + (n % 1000)}`;
    const env: ReclaimWorkerEnv & Record<string, string> = {
      RW_ZK: options.zk,
      RW_NAME: options.name,
      // A new state directory per start, as a new pod: no state file to start from.
      RW_STATE_DIR: join(stateRoot, String(n)),
      RW_RECLAIM: options.reclaim,
      RW_WORKER_BITS: String(options.workerBits),
      RW_SESSION_TIMEOUT_MS: String(options.sessionTimeoutMs),
      ...(n % options.faketimeEvery === options.faketimeEvery - 1 ? behind.env() : {}),
    };
    if (env.LD_PRELOAD) clockBehindStarts++;
    const spawnedAt = Date.now();
    const proc = new ReclaimWorkerProcess(options.script, identity, env, onIds);
    alive.add(proc);
    maxAlive = Math.max(maxAlive, alive.size);
    try {
      await proc.until(
        () => proc.workerId !== null || proc.failure !== null || proc.exitedAt !== null,
        90_000,
        'START',
      );
      if (proc.workerId === null) {
        const code =
          proc.failure?.split(' ')[0] ?? `exit without START: ${proc.stderr.slice(-500)}`;
        failures[code] = (failures[code] ?? 0) + 1;
        return;
      }
      startMsTotal += proc.startedAt! - spawnedAt;
      startCount++;
      const list = holders.get(proc.workerId) ?? [];
      list.push(proc);
      holders.set(proc.workerId, list);
      await proc.until(() => proc.idCount > 0, 10_000, 'ID');
      await sleep(Math.floor(Math.random() * options.maxLiveMs));
    } finally {
      await proc.kill();
      alive.delete(proc);
    }
  };

  try {
    let next = 0;
    const lane = async () => {
      while (next < options.cycles && Date.now() - started < options.deadlineMs)
        await cycle(next++);
    };
    await Promise.all(Array.from({ length: options.concurrency }, lane));
  } finally {
    await Promise.all([...alive].map((proc) => proc.kill()));
    behind.dispose();
    rmSync(stateRoot, { recursive: true, force: true });
  }

  const overlaps: string[] = [];
  let reusedWorkerIds = 0;
  for (const [workerId, list] of holders) {
    reusedWorkerIds += list.length - 1;
    const sorted = [...list].sort((a, b) => a.startedAt! - b.startedAt!);
    for (let i = 1; i < sorted.length; i++) {
      const [before, after] = [sorted[i - 1]!, sorted[i]!];
      if (after.startedAt! <= before.exitedAt!)
        overlaps.push(
          `worker ${workerId}: ${after.identity} started before ${before.identity} exited`,
        );
    }
  }
  return {
    starts: startCount + Object.values(failures).reduce((a, b) => a + b, 0),
    failures,
    reusedWorkerIds,
    distinctWorkerIds: holders.size,
    ids,
    duplicates,
    overlaps,
    maxAlive,
    clockBehindStarts,
    durationMs: Date.now() - started,
    meanStartMs: startCount > 0 ? Math.round(startMsTotal / startCount) : 0,
  };
}
