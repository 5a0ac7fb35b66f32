/**
 * The kill -9 / start cycles of the worker-ID reclaim runs (docs/reliability.md, "Worker-ID
 * reclaim"): application processes started as a deployer starts them (the built
 * `dist/src/main.js` when it is newer than the sources, configuration by environment only,
 * `LEAF_SNOWFLAKE_RECLAIM` not set), each with a new identity and a new state directory
 * (as the pods of a Deployment), against real ZooKeeper, at most `concurrency` alive at
 * once, every `faketimeEvery`-th start with its wall clock `faketimeOffsetMs` behind
 * (libfaketime). Each one is loaded over HTTP from the moment it listens until its
 * `kill -9`; every operation goes to one {@link History}, checked afterwards by
 * {@link checkUnique} and {@link checkSnowflake} (no millisecond of a worker ID issued by
 * two processes), and the harness records when each process held its worker ID.
 */
import { SnowflakeLayout } from 'nestjs-leaf';
import { type SnowflakeLayoutSpec } from 'nestjs-leaf/server';
import { FaketimeClock } from '../../support/faketime';
import { HttpClient } from '../../support/http-client';
import { sleep } from '../../support/id-load';
import { checkUnique, type UniqueResult } from './checker';
import { ClusterInstance } from './cluster';
import { History } from './history';
import { Load, snowflakeRoute } from './load';
import { checkSnowflake, type ClockOffset, type SnowflakeCheckResult } from './snowflake-checker';

/**
 * The worker ID `instance` reports on `/health/ready/snowflake` once ready.
 * @throws when it is not ready within `timeoutMs`.
 */
export async function readyWorkerId(
  instance: ClusterInstance,
  timeoutMs = 20_000,
): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const base = instance.baseUrl();
    let last = 'not listening';
    if (base !== null) {
      const client = new HttpClient(base, 1);
      try {
        const answer = await client.send('/health/ready/snowflake');
        const body = JSON.parse(answer.body) as { details?: { snowflake?: { workerId?: number } } };
        const workerId = body.details?.snowflake?.workerId;
        if (answer.status === 200 && workerId !== undefined) return workerId;
        last = `${answer.status} ${answer.body}`;
      } catch (error) {
        last = String(error);
      } finally {
        client.close();
      }
    }
    if (Date.now() > deadline)
      throw new Error(`${instance.name} not ready within ${timeoutMs} ms: ${last}`);
    await sleep(100);
  }
}

/** Settings of {@link runReclaimCycles}. */
export interface ReclaimCyclesOptions {
  /** ZooKeeper connect string (`LEAF_ZK_ADDRESS`). */
  readonly zk: string;
  /** `LEAF_NAME`: a namespace of the run's own. */
  readonly name: string;
  readonly cycles: number;
  /** Most processes alive (starting or serving) at once. */
  readonly concurrency: number;
  /**
   * Further variables of every process, beyond `LEAF_ZK_ADDRESS`, `LEAF_SNOWFLAKE_ADVERTISE`,
   * `LEAF_NAME`, `LEAF_SEGMENT_ENABLED=false`, `PORT=0` and `LEAF_STATE_DIR`.
   */
  readonly env?: Record<string, string>;
  /** The bit split the processes run with (what `env` selects). @default Leaf's */
  readonly layout?: SnowflakeLayoutSpec;
  /** Every n-th start runs with its clock `faketimeOffsetMs` behind. */
  readonly faketimeEvery: number;
  readonly faketimeOffsetMs: number;
  /** How long each process is loaded before its kill -9: a random time up to this. */
  readonly maxLiveMs: number;
  /** No cycle starts after this long. */
  readonly deadlineMs: number;
  /** How long one start may take (a reclaim may wait for a killed holder's lease). @default 120_000 */
  readonly startTimeoutMs?: number;
}

/** What {@link runReclaimCycles} found. */
export interface ReclaimCyclesResult {
  readonly starts: number;
  /** Starts that did not get to serve, by error code (none expected). */
  readonly failures: Record<string, number>;
  /** What the failed starts said (`Leaf failed to start: ...`), the first 10. */
  readonly failureReports: string[];
  /** Starts that took over a worker ID an earlier process of the run had held. */
  readonly reusedWorkerIds: number;
  readonly distinctWorkerIds: number;
  /** Starts whose log says `Reclaimed worker ID`. */
  readonly reclaimLogs: number;
  /** Holders of one worker ID that served while the one before was still alive. */
  readonly overlaps: string[];
  readonly maxAlive: number;
  readonly clockBehindStarts: number;
  readonly durationMs: number;
  /** Spawn to listening, mean and longest. */
  readonly meanStartMs: number;
  readonly maxStartMs: number;
  readonly unique: UniqueResult;
  readonly snowflake: SnowflakeCheckResult;
  /** Operations by outcome. */
  readonly ok: number;
  readonly fail: number;
  readonly info: number;
}

/** When one process held its worker ID. */
interface Holder {
  readonly name: string;
  readonly identity: string;
  readonly workerId: number;
  readonly listeningAt: number;
  exitedAt: number;
}

/**
 * Runs `cycles` start / load / kill -9 cycles; see the file. Process `n` is `c<n>` with
 * identity `10.<n>:<8000 + n mod 1000>`.
 */
export async function runReclaimCycles(
  options: ReclaimCyclesOptions,
): Promise<ReclaimCyclesResult> {
  const behind = new FaketimeClock(options.faketimeOffsetMs);
  const layout = new SnowflakeLayout(0, options.layout);
  const history = new History();
  const holders = new Map<number, Holder[]>();
  const workerIds: Record<string, number> = {};
  const clockOffsets: Record<string, ClockOffset[]> = {};
  const failures: Record<string, number> = {};
  const failureReports: string[] = [];
  const alive = new Set<ClusterInstance>();
  let maxAlive = 0;
  let clockBehindStarts = 0;
  let reclaimLogs = 0;
  let startMsTotal = 0;
  let maxStartMs = 0;
  let startCount = 0;
  const started = Date.now();

  const cycle = async (n: number): Promise<void> => {
    const name = `c${n}`;
    const identity = `10.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}:${8000 + (n % 1000)}`;
    const clockBehind = n % options.faketimeEvery === options.faketimeEvery - 1;
    if (clockBehind) {
      clockBehindStarts++;
      clockOffsets[name] = [{ fromMs: 0, offsetMs: options.faketimeOffsetMs }];
    }
    const instance = ClusterInstance.create(
      name,
      {
        LEAF_ZK_ADDRESS: options.zk,
        LEAF_SNOWFLAKE_ADVERTISE: identity,
        LEAF_NAME: options.name,
        LEAF_SEGMENT_ENABLED: 'false',
        ...options.env,
        ...(clockBehind ? behind.env() : {}),
      },
      { defaults: 'deployer', startTimeoutMs: options.startTimeoutMs ?? 120_000 },
    );
    alive.add(instance);
    maxAlive = Math.max(maxAlive, alive.size);
    let load: Load | null = null;
    let holder: Holder | null = null;
    const spawnedAt = Date.now();
    try {
      try {
        await instance.start();
      } catch (error) {
        const report = /Leaf failed to start: .*/.exec(instance.output)?.[0] ?? null;
        const code = /\[(LEAF_[A-Z_]+)\]/.exec(report ?? '')?.[1] ?? 'NO_START';
        failures[code] = (failures[code] ?? 0) + 1;
        if (failureReports.length < 10)
          failureReports.push(
            `${name} (${identity}, ${Date.now() - spawnedAt} ms after spawn): ${report ?? `${String(error)} ${instance.output.slice(-2000)}`}`,
          );
        return;
      }
      const listeningAt = Date.now();
      startMsTotal += listeningAt - spawnedAt;
      maxStartMs = Math.max(maxStartMs, listeningAt - spawnedAt);
      startCount++;
      load = Load.start({
        targets: [instance],
        routes: [snowflakeRoute('ids', 'k', 20)],
        history,
        concurrency: 1,
        pauseMs: 2,
        durationMs: 600_000, // stopped at the kill; this only bounds it
      });
      const workerId = await readyWorkerId(instance);
      if (workerId > layout.maxWorkerId) throw new Error(`${name}: worker ID ${workerId}`);
      workerIds[name] = workerId;
      if (/Reclaimed worker ID /.test(instance.output)) reclaimLogs++;
      holder = { name, identity, workerId, listeningAt, exitedAt: Number.POSITIVE_INFINITY };
      const list = holders.get(workerId) ?? [];
      list.push(holder);
      holders.set(workerId, list);
      const firstDeadline = Date.now() + 10_000;
      while (load.okCount === 0 && Date.now() < firstDeadline) await sleep(5);
      await sleep(Math.floor(Math.random() * options.maxLiveMs));
    } finally {
      await instance.kill();
      if (holder) holder.exitedAt = Date.now();
      await load?.stop();
      await instance.dispose();
      alive.delete(instance);
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
    await Promise.all([...alive].map((instance) => instance.dispose()));
    behind.dispose();
  }

  const overlaps: string[] = [];
  let reusedWorkerIds = 0;
  for (const [workerId, list] of holders) {
    reusedWorkerIds += list.length - 1;
    const sorted = [...list].sort((a, b) => a.listeningAt - b.listeningAt);
    for (let i = 1; i < sorted.length; i++) {
      const [before, after] = [sorted[i - 1]!, sorted[i]!];
      if (after.listeningAt <= before.exitedAt)
        overlaps.push(
          `worker ${workerId}: ${after.name} (${after.identity}) served before ${before.name} (${before.identity}) exited`,
        );
    }
  }
  const counts = { ok: 0, fail: 0, info: 0 };
  for (const operation of history.operations) counts[operation.type]++;
  return {
    starts: startCount + Object.values(failures).reduce((a, b) => a + b, 0),
    failures,
    failureReports,
    reusedWorkerIds,
    distinctWorkerIds: holders.size,
    reclaimLogs,
    overlaps,
    maxAlive,
    clockBehindStarts,
    durationMs: Date.now() - started,
    meanStartMs: startCount > 0 ? Math.round(startMsTotal / startCount) : 0,
    maxStartMs,
    unique: checkUnique(history),
    snowflake: checkSnowflake(history.operations, {
      workerIds,
      clockOffsets,
      ...(options.layout ? { layout: options.layout } : {}),
    }),
    ...counts,
  };
}

/** One line of figures for the test log (the duplicate and violation lists left out). */
export function summarize(result: ReclaimCyclesResult): string {
  const { unique, snowflake, ...rest } = result;
  return JSON.stringify({
    ...rest,
    ids: unique.ids,
    duplicates: unique.duplicateCount,
    dropped: unique.dropped,
    snowflakeValid: snowflake.valid,
    wrongWorker: snowflake.wrongWorker.count,
    outsideWindow: snowflake.outsideWindow.count,
    notIncreasing: snowflake.notIncreasing.count,
    sharedMilliseconds: snowflake.sharedMilliseconds.count,
  });
}
