/**
 * Snowflake-mode faults (docs/reliability.md, "Snowflake mode"): real application processes
 * on a private ZooKeeper ({@link ZooKeeperServer}) under load, one fault each, every
 * operation recorded; then no duplicate ID ({@link checkUnique}) and every ID decodes to
 * its instance's worker ID and to a millisecond of its request window, increasing per
 * instance, no millisecond of a worker ID issued by two instances ({@link checkSnowflake}).
 *
 * Short timeouts keep the runs short: ZooKeeper sessions of 4 s (the server's minimum is
 * 2 s), the time lease (10 s) and heartbeat (3 s) at their defaults.
 */
import { randomBytes } from 'node:crypto';
import { LeafErrorCode } from 'nestjs-leaf';
import { FaketimeClock } from '../../support/faketime';
import { HttpClient } from '../../support/http-client';
import { sleep } from '../../support/id-load';
import { Cluster, type ClusterInstance } from '../harness/cluster';
import { History, type Operation } from '../harness/history';
import { Load, snowflakeRoute } from '../harness/load';
import {
  checkSnowflake,
  type ClockOffset,
  type SnowflakeCheckOptions,
  type SnowflakeCheckResult,
} from '../harness/snowflake-checker';
import type { ZooKeeperServer } from '../harness/zookeeper-server';
import { report, SIZES, type ScenarioReport, type ScenarioSize } from './scenario';

/** Requested ZooKeeper session timeout of every instance. */
export const SESSION_TIMEOUT_MS = 4_000;

/** The result of a snowflake scenario, for the spec's assertions. */
export interface SnowflakeScenarioResult extends ScenarioReport {
  readonly snowflake: SnowflakeCheckResult;
  readonly workerIds: Record<string, number>;
  readonly history: History;
}

const ROUTES = [snowflakeRoute('ids', 'k', 50), snowflakeRoute('get', 'k')];

/** A cluster of snowflake-only instances on `zk` in a new namespace; identity `127.0.0.1:191xx`. */
function snowflakeCluster(
  zk: ZooKeeperServer,
  slug: string,
  size: number,
  env: (name: string, index: number) => Record<string, string> = () => ({}),
): Cluster {
  const namespace = `sys-${slug}-${randomBytes(3).toString('hex')}`;
  return Cluster.create({
    size,
    env: (name, index) => ({
      LEAF_SEGMENT_ENABLED: 'false',
      LEAF_NAME: namespace,
      LEAF_ZK_ADDRESS: zk.connectString,
      LEAF_ZK_SESSION_TIMEOUT_MS: String(SESSION_TIMEOUT_MS),
      LEAF_ZK_CONNECT_TIMEOUT_MS: '2000',
      LEAF_SNOWFLAKE_ADVERTISE: `127.0.0.1:${19100 + index}`,
      ...env(name, index),
    }),
    startTimeoutMs: 90_000,
  });
}

/** The snowflake readiness details of `instance` (`/health/ready/snowflake`). */
async function snowflakeHealth(
  instance: ClusterInstance,
): Promise<{ http: number; workerId?: number; zookeeper?: boolean | null; message?: string }> {
  const client = new HttpClient(instance.baseUrl()!, 1);
  try {
    const answer = await client.send('/health/ready/snowflake');
    const body = JSON.parse(answer.body) as {
      details?: { snowflake?: { workerId?: number; zookeeper?: boolean | null; message?: string } };
    };
    return { ...body.details?.snowflake, http: answer.status };
  } finally {
    client.close();
  }
}

/** The worker ID `instance` reports once it is ready (bounded: 20 s). */
export async function workerIdOf(instance: ClusterInstance): Promise<number> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const health = await snowflakeHealth(instance);
    if (health.http === 200 && health.workerId !== undefined) return health.workerId;
    if (Date.now() > deadline) {
      throw new Error(`${instance.name} not ready within 20 s: ${JSON.stringify(health)}`);
    }
    await sleep(200);
  }
}

/** Resolves once `instance` is ready and connected to ZooKeeper again (bounded by `timeoutMs`). */
async function reconnected(instance: ClusterInstance, timeoutMs: number): Promise<number> {
  const started = Date.now();
  for (;;) {
    const health = await snowflakeHealth(instance);
    if (health.http === 200 && health.zookeeper === true) return Date.now() - started;
    if (Date.now() - started > timeoutMs) {
      throw new Error(
        `${instance.name} not reconnected within ${timeoutMs} ms: ${JSON.stringify(health)}`,
      );
    }
    await sleep(200);
  }
}

/** The safety every snowflake scenario asserts. */
export function expectSnowflakeSafe(result: SnowflakeScenarioResult, minIds = 1000): void {
  expect(result.unique.duplicates).toEqual([]);
  expect(result.unique.valid).toBe(true);
  expect(result.snowflake.wrongWorker).toEqual({ count: 0, examples: [] });
  expect(result.snowflake.outsideWindow).toEqual({ count: 0, examples: [] });
  expect(result.snowflake.notIncreasing).toEqual({ count: 0, examples: [] });
  expect(result.snowflake.sharedMilliseconds).toEqual({ count: 0, examples: [] });
  expect(result.unique.ids).toBeGreaterThan(minIds);
}

/** Every failed answer of `operations` is a typed error with one of `codes`. */
export function expectOnlyTyped(operations: readonly Operation[], codes: readonly string[]): void {
  const untyped = operations.filter(
    (o) => o.type !== 'ok' && !(o.status === 503 && codes.includes(o.error ?? '')),
  );
  expect(untyped.slice(0, 5)).toEqual([]);
}

/** The operations of `process` sent at or after `from`. */
const after = (history: History, process: string, from: number): Operation[] =>
  history.filter((o) => o.process === process && o.invokeMs >= from);

/** What a fault sees and may change while the load runs. */
interface FaultContext {
  readonly cluster: Cluster;
  /** Worker IDs of the instances started before the load. */
  readonly workerIds: Record<string, number>;
}

/** What a fault tells the checker and the report, and returns to the spec (`extra`). */
interface FaultOutcome<T> {
  readonly extra: T;
  /** Worker IDs of instances the fault started. */
  readonly workerIds?: Record<string, number>;
  readonly clock?: Pick<SnowflakeCheckOptions, 'clockOffsets' | 'offsetChangeMs'>;
  readonly facts?: Record<string, unknown>;
}

/** Settings of {@link runSnowflakeScenario}. */
interface SnowflakeScenario<T> {
  /** Printed and returned as the report's name. */
  readonly name: string;
  /** Part of the ZooKeeper namespace. */
  readonly slug: string;
  readonly zk: ZooKeeperServer;
  readonly size: ScenarioSize;
  readonly instances: number;
  readonly env?: (name: string, index: number) => Record<string, string>;
  /** Starts the instances that run before the load. @default all of them, at once */
  readonly start?: (cluster: Cluster) => Promise<void>;
  /** Load before the fault. */
  readonly warmupMs: number;
  readonly fault: (context: FaultContext) => Promise<FaultOutcome<T>>;
  /** Load after the fault. */
  readonly tailMs: number;
}

/**
 * The frame of a snowflake fault: instances start, report their worker IDs, and are
 * loaded; after the warm-up the fault runs; the load goes on for the tail; instances stop
 * gracefully; the history is checked.
 */
async function runSnowflakeScenario<T>(
  scenario: SnowflakeScenario<T>,
): Promise<SnowflakeScenarioResult & T> {
  const cluster = snowflakeCluster(scenario.zk, scenario.slug, scenario.instances, scenario.env);
  const history = new History();
  const startedAt = Date.now();
  try {
    if (scenario.start) await scenario.start(cluster);
    else await Promise.all(cluster.instances.map((instance) => instance.start()));
    const workerIds: Record<string, number> = {};
    for (const instance of cluster.instances) {
      if (instance.running) workerIds[instance.name] = await workerIdOf(instance);
    }
    const load = Load.start({
      targets: cluster.instances,
      routes: ROUTES,
      history,
      concurrency: Math.max(cluster.instances.length, SIZES[scenario.size].concurrency / 2),
      durationMs: 180_000, // stopped below; this only bounds it
      timeoutMs: 5_000, // generous on a loaded machine; a frozen instance still times out
      pauseMs: 2,
    });
    await sleep(scenario.warmupMs);
    const outcome = await scenario.fault({ cluster, workerIds });
    await sleep(scenario.tailMs);
    await load.stop();
    await Promise.all(cluster.instances.map((instance) => instance.stop()));
    const allWorkerIds = { ...workerIds, ...outcome.workerIds };
    const snowflake = checkSnowflake(history.operations, {
      workerIds: allWorkerIds,
      ...outcome.clock,
    });
    const base = report(scenario.name, scenario.size, startedAt, history, {
      workerIds: allWorkerIds,
      snowflakeValid: snowflake.valid,
      wrongWorker: snowflake.wrongWorker.count,
      outsideWindow: snowflake.outsideWindow.count,
      notIncreasing: snowflake.notIncreasing.count,
      sharedMilliseconds: snowflake.sharedMilliseconds.count,
      ...outcome.facts,
    });
    return { ...base, snowflake, workerIds: allWorkerIds, history, ...outcome.extra };
  } finally {
    await cluster.dispose();
  }
}

/**
 * The clock options of the checker for a `p0` whose wall clock libfaketime set to
 * `offsets`. Once an offset is set, any earlier one (and real time) stays accepted for the
 * rest of the run: libfaketime's multithreaded build re-reads its offset file once a second
 * in every thread through one shared static buffer, and another thread can see it for a
 * moment as `+0`, i.e. real time (a data race in the library, not in the application). The
 * application takes such a jump as one more clock fault (forward, then back); the window
 * check still proves no ID is later than its answer or earlier than its request by more
 * than the largest offset.
 */
function fakedClock(
  offsets: ClockOffset[],
): Pick<SnowflakeCheckOptions, 'clockOffsets' | 'offsetChangeMs'> {
  return { clockOffsets: { p0: offsets }, offsetChangeMs: Number.POSITIVE_INFINITY };
}

const STARTUP_WAIT = /Waited \d+ ms for the clock to pass[^"]*/;

// ------------------------------------------------------------------------- clock faults

/**
 * The wall clock of a running instance is stepped back 5 s (libfaketime, monotonic clock
 * left real). Expected: it refuses with 503 `LEAF_CLOCK_MOVED_BACKWARDS` until its clock is
 * past its last millisecond again, then serves; never a millisecond below one it used.
 */
export async function snowflakeClockRollback(
  zk: ZooKeeperServer,
  size: ScenarioSize,
): Promise<SnowflakeScenarioResult & { steppedAt: number }> {
  const clock = new FaketimeClock(0);
  try {
    return await runSnowflakeScenario({
      name: 'snowflake clock stepped back 5 s while running',
      slug: 'rollback',
      zk,
      size,
      instances: 1,
      start: (cluster) => cluster.get('p0').start(clock.env()),
      warmupMs: size === 'ci' ? 2_000 : 5_000,
      fault: async () => {
        const steppedAt = Date.now();
        clock.set(-5_000);
        return {
          extra: { steppedAt },
          clock: fakedClock([{ fromMs: steppedAt, offsetMs: -5_000 }]),
        };
      },
      tailMs: size === 'ci' ? 10_000 : 20_000,
    });
  } finally {
    clock.dispose();
  }
}

/**
 * An instance is killed (kill -9) under load and restarted on the same state directory with
 * its wall clock `behindMs` behind. Expected: the restart waits until its clock is past
 * everything the first run may have issued (time lease, heartbeat), then serves IDs above
 * every earlier one. With 1 s, this is Leaf's issue #216 (inside its 3 s heartbeat window).
 *
 * With `stepWhileRunning`, the clock is stepped back while the first run still serves and
 * the kill comes 3 s later: with 15 s, further back than its 10 s time lease reaches, the
 * heartbeats written meanwhile must not have lowered the stored bound.
 */
export async function snowflakeRestartClockBehind(
  zk: ZooKeeperServer,
  size: ScenarioSize,
  behindMs: number,
  options: { stepWhileRunning?: boolean } = {},
): Promise<SnowflakeScenarioResult & { restartMs: number; waitedLog: string | null }> {
  const clock = new FaketimeClock(0);
  const behind = `${behindMs / 1000} s behind`;
  try {
    return await runSnowflakeScenario({
      name: options.stepWhileRunning
        ? `snowflake clock stepped back ${behindMs / 1000} s, kill -9 3 s later, restart still ${behind}`
        : `snowflake kill -9, restart with the clock ${behind}`,
      slug: `behind${behindMs}${options.stepWhileRunning ? 'running' : ''}`,
      zk,
      size,
      instances: 1,
      start: (cluster) => cluster.get('p0').start(clock.env()),
      warmupMs: size === 'ci' ? 3_000 : 8_000,
      fault: async ({ cluster, workerIds }) => {
        const p0 = cluster.get('p0');
        let steppedAt = Date.now();
        if (options.stepWhileRunning) {
          clock.set(-behindMs);
          await sleep(3_000);
          await p0.kill();
        } else {
          await p0.kill();
          steppedAt = Date.now();
          clock.set(-behindMs);
        }
        const restartedAt = Date.now();
        await p0.start(clock.env());
        const restartMs = Date.now() - restartedAt;
        expect(await workerIdOf(p0)).toBe(workerIds.p0);
        const waitedLog = STARTUP_WAIT.exec(p0.output)?.[0] ?? null;
        return {
          extra: { restartMs, waitedLog },
          clock: fakedClock([{ fromMs: steppedAt, offsetMs: -behindMs }]),
          facts: { restartMs, waitedLog },
        };
      },
      tailMs: size === 'ci' ? 3_000 : 8_000,
    });
  } finally {
    clock.dispose();
  }
}

// --------------------------------------------------------------------- ZooKeeper faults

/**
 * ZooKeeper itself stopped (`stop`, clean), killed (`kill`, SIGKILL) or frozen (`pause`,
 * SIGSTOP) under load for `outageMs`, then back. Expected: the instances serve throughout
 * from their time lease and local runway (60 s by default, longer than the outage), and
 * reconnect without a restart.
 */
export async function snowflakeZookeeperOutage(
  zk: ZooKeeperServer,
  size: ScenarioSize,
  fault: 'stop' | 'kill' | 'pause',
  outageMs: number,
): Promise<SnowflakeScenarioResult & { reconnectMs: number[] }> {
  const how = { stop: 'stopped', kill: 'killed (kill -9)', pause: 'paused (SIGSTOP)' }[fault];
  return runSnowflakeScenario({
    name: `snowflake ZooKeeper ${how} ${outageMs / 1000} s under load`,
    slug: `zk${fault}`,
    zk,
    size,
    instances: SIZES[size].instances,
    warmupMs: size === 'ci' ? 2_000 : 5_000,
    fault: async ({ cluster }) => {
      if (fault === 'pause') zk.pause();
      else if (fault === 'kill') await zk.kill();
      else await zk.stop();
      await sleep(outageMs);
      if (fault === 'pause') zk.resume();
      else await zk.start();
      const reconnectMs = await Promise.all(
        cluster.instances.map((instance) => reconnected(instance, 30_000)),
      );
      return { extra: { reconnectMs }, facts: { reconnectMs } };
    },
    tailMs: size === 'ci' ? 2_000 : 5_000,
  });
}

/**
 * The ZooKeeper session of `p0` is expired by force ({@link ZooKeeperServer.expireSession}).
 * Expected: `p0` stops extending its lease, opens a new session, takes its liveness node
 * again, finds its worker node still its own and goes on; nobody else is affected.
 */
export async function snowflakeSessionExpiry(
  zk: ZooKeeperServer,
  size: ScenarioSize,
): Promise<
  SnowflakeScenarioResult & {
    expiredAt: number;
    reconnectMs: number;
    session: string;
    newSession: string;
    expiredLogged: boolean;
  }
> {
  return runSnowflakeScenario({
    name: 'snowflake forced session expiry',
    slug: 'expiry',
    zk,
    size,
    instances: 2,
    warmupMs: 2_000,
    fault: async ({ cluster }) => {
      const p0 = cluster.get('p0');
      const session = /session (0x[0-9a-f]+)/.exec(p0.output)?.[1];
      if (!session) throw new Error(`no session ID in p0's log:\n${p0.output}`);
      const expiredAt = Date.now();
      await zk.expireSession(session);
      await sleep(1_000);
      const reconnectMs = await reconnected(p0, 20_000);
      // The reconnect's log line may lag the health answer by one log batch.
      const lastSession = (output: string) =>
        [...output.matchAll(/session (0x[0-9a-f]+)/g)].at(-1)![1]!;
      await p0.waitForOutput((output) => lastSession(output) !== session, 3_000);
      const newSession = lastSession(p0.output);
      const expiredLogged = /session expired/.test(p0.output);
      const facts = { session, newSession, expiredLogged, reconnectMs };
      return { extra: { expiredAt, ...facts }, facts };
    },
    tailMs: size === 'ci' ? 4_000 : 15_000,
  });
}

/**
 * `p0` is paused (SIGSTOP) for the session timeout + 3 s under load, then resumed; no other
 * process has its identity. Expected: back from the pause it is fenced (its session expired),
 * serves only within its durable bound, takes its liveness node again in a new session and
 * goes on; the others serve throughout.
 */
export async function snowflakeAppPaused(
  zk: ZooKeeperServer,
  size: ScenarioSize,
): Promise<SnowflakeScenarioResult & { resumedAt: number }> {
  return runSnowflakeScenario({
    name: `snowflake app paused (SIGSTOP) ${(SESSION_TIMEOUT_MS + 3_000) / 1000} s, past its session timeout`,
    slug: 'sigstop',
    zk,
    size,
    instances: 2,
    warmupMs: 2_000,
    fault: async ({ cluster }) => {
      const p0 = cluster.get('p0');
      p0.pause();
      await sleep(SESSION_TIMEOUT_MS + 3_000);
      p0.resume();
      const resumedAt = Date.now();
      await reconnected(p0, 20_000);
      return { extra: { resumedAt } };
    },
    tailMs: size === 'ci' ? 4_000 : 10_000,
  });
}

// ------------------------------------------------------------------- worker-ID faults

/**
 * Five instances (distinct identities) started at the same moment on an empty namespace.
 * Expected: five distinct worker IDs, 0 to 4, each instance's IDs carrying its own.
 */
export async function snowflakeFiveAtOnce(
  zk: ZooKeeperServer,
  size: ScenarioSize,
): Promise<SnowflakeScenarioResult> {
  return runSnowflakeScenario({
    name: 'snowflake five instances started at once',
    slug: 'five',
    zk,
    size,
    instances: 5,
    warmupMs: 0,
    fault: () => Promise.resolve({ extra: {} }),
    tailMs: size === 'ci' ? 3_000 : 10_000,
  });
}

/**
 * Two processes with the same advertise identity on different hosts (their own state
 * directories): `p0` serves, is paused past its session timeout, `p1` starts meanwhile and
 * takes the worker ID; then `p0` is resumed. Expected: never both issuing — `p1` waits past
 * `p0`'s horizon, `p0` finds `p1` holding the worker ID and stops (503
 * `LEAF_TIME_LEASE_UNAVAILABLE`); no millisecond of the worker ID is issued by both.
 */
export async function snowflakeSameIdentity(
  zk: ZooKeeperServer,
  size: ScenarioSize,
): Promise<SnowflakeScenarioResult & { resumedAt: number }> {
  return runSnowflakeScenario({
    name: 'snowflake same identity: first paused past its session timeout, second starts, first resumed',
    slug: 'twins',
    zk,
    size,
    instances: 2,
    env: (name) => ({
      LEAF_SNOWFLAKE_ADVERTISE: '127.0.0.1:19199',
      // p0 has the longer runway: p1 must wait for p0's horizon, not its own.
      LEAF_SNOWFLAKE_LOCAL_RUNWAY_MS: name === 'p0' ? '8000' : '2000',
    }),
    start: (cluster) => cluster.get('p0').start(),
    warmupMs: size === 'ci' ? 1_500 : 5_000,
    fault: async ({ cluster, workerIds }) => {
      const [p0, p1] = cluster.instances as [ClusterInstance, ClusterInstance];
      p0.pause();
      const second = p1.start();
      // p1 takes the liveness node once p0's session expired, then waits past p0's horizon.
      await p1.waitForOutput(
        (output) => /Liveness node \S+ created for worker ID/.test(output),
        30_000,
      );
      p0.resume();
      const resumedAt = Date.now();
      await second;
      return {
        extra: { resumedAt },
        workerIds: { p1: workerIds.p0! },
        facts: { p1Waited: STARTUP_WAIT.exec(p1.output)?.[0] ?? null },
      };
    },
    tailMs: size === 'ci' ? 3_000 : 10_000,
  });
}

// ----------------------------------------------------------------------- expectations
// One function per scenario, shared by the CI subset and the full spec.

const E = LeafErrorCode;

/** Clock stepped back while running: typed refusals for about the step, then served again. */
export function expectRollbackHandled(
  result: Awaited<ReturnType<typeof snowflakeClockRollback>>,
): void {
  expectSnowflakeSafe(result);
  expectOnlyTyped(result.history.operations, [E.CLOCK_MOVED_BACKWARDS]);
  expect(result.availability.errors[E.CLOCK_MOVED_BACKWARDS]).toBeGreaterThan(0);
  // 5 s of refusals, + 1 s for libfaketime to notice the step, + margin on a loaded machine.
  expect(result.availability.longestGapMs).toBeLessThan(9_000);
  const settled = after(result.history, 'p0', result.steppedAt + 8_000);
  expect(settled.filter((o) => o.type === 'ok').length).toBeGreaterThan(0);
}

/** Restarted with the clock behind: waited past the first run's bound, then served above it. */
export function expectRestartBehindHandled(
  result: Awaited<ReturnType<typeof snowflakeRestartClockBehind>>,
): void {
  expectSnowflakeSafe(result);
  expect(result.waitedLog).toMatch(/Waited \d+ ms/);
  expect(Object.keys(result.snowflake.perProcess)).toEqual(['p0']);
}

/** ZooKeeper outage shorter than the runway: served throughout, reconnected. */
export function expectOutageRiddenOut(
  result: Awaited<ReturnType<typeof snowflakeZookeeperOutage>>,
): void {
  expectSnowflakeSafe(result);
  expect(result.availability.errors).toEqual({});
  expect(result.availability.fail + result.availability.info).toBe(0);
}

/** Forced expiry: p0 recovers in a new session; p1 is unaffected. */
export function expectExpiryRecovered(
  result: Awaited<ReturnType<typeof snowflakeSessionExpiry>>,
): void {
  expectSnowflakeSafe(result);
  // The fault took: the session ended and p0 runs in another one.
  expect(result.expiredLogged).toBe(true);
  expect(result.newSession).not.toBe(result.session);
  expectOnlyTyped(result.history.operations, [E.TIME_LEASE_UNAVAILABLE]);
  expect(result.availability.byProcess.p1!.ok).toBe(
    result.history.filter((o) => o.process === 'p1').length,
  );
  const recovered = after(result.history, 'p0', result.expiredAt + result.reconnectMs + 3_000);
  expect(recovered.length).toBeGreaterThan(0);
  expect(recovered.every((o) => o.type === 'ok')).toBe(true);
}

/** Paused past the session timeout, alone with its identity: back in service after the resume. */
export function expectPauseRecovered(result: Awaited<ReturnType<typeof snowflakeAppPaused>>): void {
  expectSnowflakeSafe(result);
  const notOk = (list: Operation[]) => list.filter((o) => o.type !== 'ok').slice(0, 5);
  expect(notOk(result.history.filter((o) => o.process === 'p1'))).toEqual([]);
  const recovered = after(result.history, 'p0', result.resumedAt + 6_000);
  expect(recovered.length).toBeGreaterThan(0);
  expect(notOk(recovered)).toEqual([]);
  // What p0 did not answer while frozen timed out on the client (unknown outcome), or was
  // refused with a typed 503 right after the resume.
  const failed = result.history.filter((o) => o.process === 'p0' && o.type !== 'ok');
  expect(
    failed.filter((o) => o.error !== 'TIMEOUT' && o.error !== E.TIME_LEASE_UNAVAILABLE),
  ).toEqual([]);
}

/** Five at once: worker IDs 0 to 4. */
export function expectFiveDistinct(result: SnowflakeScenarioResult): void {
  expectSnowflakeSafe(result);
  expect(Object.values(result.workerIds).sort()).toEqual([0, 1, 2, 3, 4]);
  expect(result.availability.fail + result.availability.info).toBe(0);
}

/** Same identity: the first's milliseconds all before the second's first; the first stopped. */
export function expectNeverBothIssuing(
  result: Awaited<ReturnType<typeof snowflakeSameIdentity>>,
): void {
  expectSnowflakeSafe(result, 100);
  const { p0, p1 } = result.snowflake.perProcess;
  expect(p0).toBeDefined();
  expect(p1).toBeDefined();
  expect(p0!.lastMs).toBeLessThan(p1!.firstMs);
  const lastOfP0 = result.history
    .filter((o) => o.process === 'p0' && o.status !== undefined)
    .at(-1);
  expect(lastOfP0).toMatchObject({ status: 503, error: E.TIME_LEASE_UNAVAILABLE });
}
