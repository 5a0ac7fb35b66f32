/**
 * UUIDv7 from three processes with a clock step (issue 29; docs/reliability.md, "UUIDv7";
 * docs/formats.md): three instances of the built app started as a deployer does —
 * environment only: `NODE_ENV=production`, snowflake mode alone, worker IDs from ZooKeeper,
 * every other setting at its default — each asked for `perInstance` UUIDv7 through
 * `GET /api/snowflake/uuids/k?count=100` (a tenth of the largest batch allowed by default:
 * short answers keep the gaps between one client's requests short, below), one request at a
 * time per instance and the three at once. Once `p0` has served `stepAt` of its UUIDs, its wall clock is stepped back 2 ms
 * (libfaketime, monotonic clock left real, as an NTP step).
 *
 * A 2 ms step is behind an issued millisecond only if the generator issued within the last
 * millisecond or so; with one client per instance on a shared 2-core machine, an instance
 * often idles longer than that between requests, and the step then changes nothing. So the
 * step is timed: libfaketime re-reads its offset file at the first clock reading of each
 * second (`FAKETIME_CACHE_DURATION=0`), the step is written 20 ms before a second boundary,
 * `p0`'s client sends from 30 ms before to 30 ms after it, and the other two clients hold
 * back from 20 ms before to 30 ms after it (the test runner, one process for every client,
 * then serves `p0`'s client alone). If `p0`'s `leaf_clock_backwards_total` did not rise (it
 * was idle at that moment after all), the clock is set right at the next boundary and
 * stepped back 2 ms again at the one after, at most {@link MAX_STEPS} times; outside those
 * moments `p0`'s client waits, and once a step was seen it runs to the end.
 *
 * Every UUID is recorded and checked ({@link checkUuidV7}): RFC 9562's UUIDv7 in canonical
 * text, no UUID twice across the three, each process's UUIDs strictly increasing in the order
 * it served them (one request at a time, so request order is service order), the worker ID
 * in each the instance's own, its millisecond inside its request's window. How `p0` took the
 * step is read from its `/metrics` (`leaf_clock_backwards_total`: waited out or refused) and
 * its failed requests (each must be a typed 503).
 */
import { randomBytes } from 'node:crypto';
import { LeafErrorCode } from 'nestjs-leaf';
import { FaketimeClock } from '../../support/faketime';
import { HttpClient } from '../../support/http-client';
import { sleep } from '../../support/id-load';
import { zookeeperConnectString } from '../../support/services';
import { deleteTree, withZookeeperAdmin } from '../../support/zookeeper';
import { Cluster, type ClusterInstance } from '../harness/cluster';
import { errorCode } from '../harness/load';
import { checkUuidV7, type UuidAnswer, type UuidCheckResult } from '../harness/uuid-checker';
import { sparePort } from '../harness/zookeeper-server';
import type { ScenarioSize } from './scenario';
import { workerIdOf } from './snowflake-faults';

/** UUIDs per instance, and after how many of its own `p0`'s clock is stepped. */
export const UUID_V7_SIZES: Record<ScenarioSize, { perInstance: number; stepAt: number }> = {
  ci: { perInstance: 50_000, stepAt: 10_000 },
  full: { perInstance: 1_000_000, stepAt: 300_000 },
};

/** The clock step of `p0`. */
export const STEP_BACK_MS = 2;
/** Steps back at most, until `p0`'s generator has seen one. */
export const MAX_STEPS = 8;
/** `count` of each request. */
const BATCH = 100;
/** A request without an answer after this long fails. */
const REQUEST_TIMEOUT_MS = 10_000;
/** Failed requests one instance may have before the run gives up on it. */
const MAX_FAILURES = 1_000;
/** Around each step's second boundary (see the file): when `p0`'s client starts sending... */
const P0_FROM_MS = -30;
/** ...when the others hold back and the step is written... */
const WRITE_AT_MS = -20;
/** ...and when the others go on and `p0`'s client waits again (unless the step was seen). */
const UNTIL_MS = 30;

/** A request that did not answer 200. */
interface UuidFailure {
  /** HTTP status; absent on a network error. */
  readonly status?: number;
  /** The answer's `LEAF_...` code, `HTTP_<status>`, or the network error's code. */
  readonly error: string;
}

/** What one instance served its client. */
interface InstanceRun {
  readonly answers: UuidAnswer[];
  readonly failures: UuidFailure[];
  /** 200 answers with another number of UUIDs than asked for. */
  readonly wrongCounts: number;
  /** Longest request, ms. */
  readonly longestRequestMs: number;
}

/** One step of `p0`'s clock: 2 ms back, or right again after a step back it did not see. */
export interface ClockStep {
  /** The second boundary where libfaketime took the new offset up (runner time). */
  readonly atMs: number;
  /** The offset from then on: -2 or 0. */
  readonly offsetMs: number;
  /** UUIDs `p0` had served just before. */
  readonly uuidsBefore: number;
  /** A step back: whether `p0`'s `leaf_clock_backwards_total` rose with it. */
  readonly seen: boolean;
}

/** The figures of a run, as printed and as docs/reliability.md quotes them. */
export interface UuidV7Result {
  readonly size: ScenarioSize;
  readonly perInstance: number;
  readonly workerIds: Record<string, number>;
  readonly check: UuidCheckResult;
  /** Failed requests per instance, by status and code. */
  readonly failures: Record<string, Record<string, number>>;
  readonly wrongCounts: number;
  readonly steps: readonly ClockStep[];
  /** `p0`'s requests sent after the step it saw took effect. */
  readonly answersAfterStep: number;
  /** `p0`'s `leaf_clock_backwards_total` after the run. */
  readonly clockBackwards: { waited: number; refused: number };
  /** `p0`'s log line about the step, if it wrote one. */
  readonly stepLog: string | null;
  /** Longest request per instance, ms. */
  readonly longestRequestMs: Record<string, number>;
  /** Fetching, all three at once. */
  readonly fetchMs: number;
  /** Start to stop, instances included. */
  readonly durationMs: number;
}

/** Closed, it holds whoever waits on it until it opens. */
class Gate {
  private closed: Promise<void> | null = null;
  private release: () => void = () => undefined;

  close(): void {
    this.closed ??= new Promise((resolve) => (this.release = resolve));
  }

  open(): void {
    this.closed = null;
    this.release();
  }

  /** Resolves at once when open. */
  wait(): Promise<void> | undefined {
    return this.closed ?? undefined;
  }
}

const sleepUntil = (ms: number): Promise<void> => sleep(Math.max(0, ms - Date.now()));

/**
 * Asks `instance` for `quota` UUIDs, one request at a time, recording every answer;
 * `beforeRequest(served)` runs (and is awaited) before each request.
 * @throws after {@link MAX_FAILURES} failed requests.
 */
async function fetchUuids(
  instance: ClusterInstance,
  quota: number,
  beforeRequest: (served: number) => Promise<void> | undefined,
): Promise<InstanceRun> {
  // One connection: the instance serves this client's requests in the order they were sent.
  const client = new HttpClient(instance.baseUrl()!, 1);
  const answers: UuidAnswer[] = [];
  const failures: UuidFailure[] = [];
  let wrongCounts = 0;
  let longestRequestMs = 0;
  let served = 0;
  try {
    while (served < quota) {
      if (failures.length >= MAX_FAILURES) {
        throw new Error(
          `${instance.name}: ${failures.length} failed requests, the last ${JSON.stringify(failures.at(-1))}`,
        );
      }
      await beforeRequest(served);
      const count = Math.min(BATCH, quota - served);
      const path = `/api/snowflake/uuids/k?count=${count}`;
      const invokeMs = Date.now();
      let answer: { status: number; body: string };
      try {
        answer = await client.send(path, { timeoutMs: REQUEST_TIMEOUT_MS });
      } catch (error) {
        failures.push({ error: (error as NodeJS.ErrnoException).code ?? String(error) });
        await sleep(5);
        continue;
      }
      const completeMs = Date.now();
      longestRequestMs = Math.max(longestRequestMs, completeMs - invokeMs);
      if (answer.status !== 200) {
        failures.push({ status: answer.status, error: errorCode(answer.status, answer.body) });
        await sleep(5);
        continue;
      }
      const { uuids } = JSON.parse(answer.body) as { uuids: string[] };
      if (uuids.length !== count) wrongCounts++;
      answers.push({ invokeMs, completeMs, uuids });
      served += uuids.length;
    }
  } finally {
    client.close();
  }
  return { answers, failures, wrongCounts, longestRequestMs };
}

/** `leaf_clock_backwards_total` of `instance`. */
async function clockBackwardsOf(
  instance: ClusterInstance,
): Promise<{ waited: number; refused: number }> {
  const client = new HttpClient(instance.baseUrl()!, 1);
  try {
    const { body } = await client.send('/metrics');
    const sample = (outcome: string): number => {
      const series = `leaf_clock_backwards_total{outcome="${outcome}"} `;
      const line = body.split('\n').find((l) => l.startsWith(series));
      if (line === undefined) throw new Error(`no ${series.trim()} in /metrics`);
      return Number(line.slice(series.length));
    };
    return { waited: sample('waited'), refused: sample('refused') };
  } finally {
    client.close();
  }
}

/** What {@link stepClock} needs. */
interface StepContext {
  readonly p0: ClusterInstance;
  readonly clock: FaketimeClock;
  /** `p0`'s client waits on it. */
  readonly p0Gate: Gate;
  /** The other clients wait on it. */
  readonly othersGate: Gate;
  /** UUIDs `p0` has served so far; `null` once its client is done. */
  readonly progress: () => number | null;
}

/**
 * Steps `p0`'s clock back 2 ms at a second boundary (see the file); if its generator did not
 * see the step, sets it right at the next boundary and steps it back again at the one after,
 * at most {@link MAX_STEPS} steps back, until `p0`'s client is done. Leaves both gates open.
 */
async function stepClock(context: StepContext): Promise<ClockStep[]> {
  const { p0, clock, p0Gate, othersGate, progress } = context;
  const steps: ClockStep[] = [];
  let offsetMs = 0;
  let stepsBack = 0;
  let boundaries = 0;
  try {
    while (stepsBack < MAX_STEPS && boundaries++ < 4 * MAX_STEPS && progress() !== null) {
      const boundary = Math.ceil((Date.now() + 100) / 1000) * 1000;
      const before = await clockBackwardsOf(p0);
      await sleepUntil(boundary + P0_FROM_MS);
      p0Gate.open();
      await sleepUntil(boundary + WRITE_AT_MS);
      othersGate.close();
      const uuidsBefore = progress();
      // A runner too busy to be on time skips this boundary: written after it, the offset
      // would be taken up a second later, while p0's client waits.
      if (Date.now() >= boundary - 5 || uuidsBefore === null) {
        othersGate.open();
        p0Gate.close();
        continue;
      }
      // A step forward (setting the clock right) changes only the next IDs' millisecond.
      offsetMs = offsetMs === 0 ? -STEP_BACK_MS : 0;
      clock.set(offsetMs);
      await sleepUntil(boundary + UNTIL_MS);
      othersGate.open();
      const after = await clockBackwardsOf(p0);
      const seen = offsetMs < 0 && after.waited + after.refused > before.waited + before.refused;
      steps.push({ atMs: boundary, offsetMs, uuidsBefore, seen });
      if (offsetMs < 0) stepsBack++;
      if (seen) break;
      p0Gate.close();
    }
  } finally {
    p0Gate.open();
    othersGate.open();
  }
  return steps;
}

/** Counts of `failures` by status and code (`503 LEAF_...`, or a network error's code). */
function byCode(failures: readonly UuidFailure[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const { status, error } of failures) {
    const key = status === undefined ? error : `${status} ${error}`;
    counts[key] = (counts[key] ?? 0) + 1;
  }
  return counts;
}

/** The run of the file's top comment, at `size` ({@link UUID_V7_SIZES}). */
export async function uuidV7ThreeProcesses(size: ScenarioSize): Promise<UuidV7Result> {
  const { perInstance, stepAt } = UUID_V7_SIZES[size];
  const name = `uuid7-${randomBytes(4).toString('hex')}`;
  const ports = [await sparePort(), await sparePort(), await sparePort()];
  // Cache 0: libfaketime re-reads the offset file at the first clock reading of each second.
  const clock = new FaketimeClock(0, 0);
  const startedAt = Date.now();
  const cluster = Cluster.create({
    size: 3,
    defaults: 'deployer',
    startTimeoutMs: 90_000,
    env: (_name, index) => ({
      NODE_ENV: 'production',
      HOST: '127.0.0.1',
      PORT: String(ports[index]),
      LEAF_NAME: name,
      LEAF_SEGMENT_ENABLED: 'false',
      LEAF_ZK_ADDRESS: zookeeperConnectString(),
      LEAF_SNOWFLAKE_ADVERTISE: `127.0.0.1:${ports[index]}`,
    }),
  });
  try {
    const [p0, p1, p2] = cluster.instances as [ClusterInstance, ClusterInstance, ClusterInstance];
    await Promise.all([p0.start(clock.env()), p1.start(), p2.start()]);
    const workerIds: Record<string, number> = {};
    for (const instance of cluster.instances) {
      workerIds[instance.name] = await workerIdOf(instance);
    }
    const p0Gate = new Gate();
    const othersGate = new Gate();
    let p0Served: number | null = 0;
    let stepping: Promise<ClockStep[]> | null = null;
    const fetchStarted = Date.now();
    const runs = await Promise.all([
      fetchUuids(p0, perInstance, (served) => {
        p0Served = served;
        if (stepping === null && served >= stepAt) {
          p0Gate.close();
          const progress = () => p0Served;
          stepping = stepClock({ p0, clock, p0Gate, othersGate, progress });
        }
        return p0Gate.wait();
      }).finally(() => (p0Served = null)),
      fetchUuids(p1, perInstance, () => othersGate.wait()),
      fetchUuids(p2, perInstance, () => othersGate.wait()),
    ]);
    const fetchMs = Date.now() - fetchStarted;
    const steps = await ((stepping as Promise<ClockStep[]> | null) ?? Promise.resolve([]));
    const clockBackwards = await clockBackwardsOf(p0);
    const stepLine =
      /The system clock moved back \d+ ms behind[^"\n]*?(?:IDs keep coming|the last issued millisecond)/;
    // Log lines are written in batches (at most 250 ms late).
    if (clockBackwards.waited + clockBackwards.refused > 0) {
      await p0.waitForOutput((output) => stepLine.test(output), 2_000);
    }
    const stepLog = stepLine.exec(p0.output)?.[0] ?? null;
    await Promise.all(cluster.instances.map((instance) => instance.stop()));

    const names = cluster.instances.map((instance) => instance.name);
    const answers = Object.fromEntries(names.map((n, i) => [n, runs[i]!.answers]));
    const check = checkUuidV7(answers, { workerIds, clockSlackMs: { p0: STEP_BACK_MS } });
    const seenAt = steps.find((step) => step.seen)?.atMs;
    const result: UuidV7Result = {
      size,
      perInstance,
      workerIds,
      check,
      failures: Object.fromEntries(names.map((n, i) => [n, byCode(runs[i]!.failures)])),
      wrongCounts: runs.reduce((sum, run) => sum + run.wrongCounts, 0),
      steps,
      answersAfterStep:
        seenAt === undefined ? 0 : runs[0]!.answers.filter((a) => a.invokeMs > seenAt).length,
      clockBackwards,
      stepLog,
      longestRequestMs: Object.fromEntries(names.map((n, i) => [n, runs[i]!.longestRequestMs])),
      fetchMs,
      durationMs: Date.now() - startedAt,
    };
    report(result);
    return result;
  } finally {
    clock.dispose();
    await cluster.dispose();
    await withZookeeperAdmin((admin) => deleteTree(admin, `/snowflake/${name}`)).catch(
      () => undefined,
    );
  }
}

/** Prints the run's figures on one line (docs/reliability.md quotes them). */
function report(result: UuidV7Result): void {
  const { check } = result;
  const kinds = ['invalid', 'duplicates', 'notIncreasing', 'wrongWorker', 'outsideWindow'] as const;
  const steps = result.steps.map(
    (step) =>
      `${step.offsetMs < 0 ? 'back' : 'right'} after ${step.uuidsBefore} UUIDs${step.seen ? ' (seen)' : ''}`,
  );
  console.log(
    `[system] UUIDv7 from three processes, p0's clock stepped back ${STEP_BACK_MS} ms (${result.size}): ` +
      `${check.uuids} UUIDs checked (${check.distinct} distinct): ` +
      `${kinds.map((kind) => `${check[kind].count} ${kind}`).join(', ')}; ` +
      `worker IDs ${JSON.stringify(result.workerIds)}; p0's clock: ${steps.join(', ') || 'never stepped'}; ` +
      `${result.answersAfterStep} requests after; leaf_clock_backwards_total ${JSON.stringify(result.clockBackwards)}; ` +
      `failed requests ${JSON.stringify(result.failures)}; ` +
      `longest request ${JSON.stringify(result.longestRequestMs)} ms; ` +
      `fetch ${result.fetchMs} ms, run ${result.durationMs} ms; log: ${result.stepLog ?? 'none'}`,
  );
}

/**
 * The proof: every UUID valid, none twice, each process strictly increasing and carrying its
 * own worker ID; `p0`'s generator saw a step back while serving its UUIDs; a request that
 * failed is a typed 503 `LEAF_CLOCK_MOVED_BACKWARDS` of `p0`, nothing else.
 */
export function expectUuidV7Proof(
  result: UuidV7Result,
  { stepMustBeSeen = true }: { stepMustBeSeen?: boolean } = {},
): void {
  const { check, perInstance } = result;
  const none = { count: 0, examples: [] };
  expect(check.invalid).toEqual(none);
  expect(check.duplicates).toEqual(none);
  expect(check.notIncreasing).toEqual(none);
  expect(check.wrongWorker).toEqual(none);
  expect(check.outsideWindow).toEqual(none);
  expect(check.valid).toBe(true);
  expect(check.uuids).toBe(3 * perInstance);
  expect(check.distinct).toBe(3 * perInstance);
  for (const name of ['p0', 'p1', 'p2']) expect(check.perProcess[name]?.uuids).toBe(perInstance);
  expect(result.wrongCounts).toBe(0);
  expect(new Set(Object.values(result.workerIds)).size).toBe(3);
  // A step came in the middle of p0's UUIDs and was behind a millisecond it had issued. On a
  // loaded machine (the CI subset, beside the other suites) p0 may never be issuing within
  // 2 ms of a step: the subset then proves the invariants without the fault, and says so.
  const seen = result.steps.filter((step) => step.seen);
  if (stepMustBeSeen || seen.length > 0) {
    expect(seen).toHaveLength(1);
    expect(result.answersAfterStep).toBeGreaterThan(0);
    expect(result.clockBackwards.waited + result.clockBackwards.refused).toBeGreaterThan(0);
  } else {
    console.warn(`[system] UUIDv7 (ci): no step of ${result.steps.length} met p0 issuing`);
  }
  expect(result.failures.p1).toEqual({});
  expect(result.failures.p2).toEqual({});
  const typed = `503 ${LeafErrorCode.CLOCK_MOVED_BACKWARDS}`;
  expect(Object.keys(result.failures.p0 ?? {}).filter((key) => key !== typed)).toEqual([]);
}
