import { LeaseTableWorkerIdSource } from './lease-table-worker-id.source';
import { LeafErrorCode } from '../errors/leaf.error';
import { TimeLeaseUnavailableError } from '../errors/time-lease-unavailable.error';
import { WorkerIdUnavailableError } from '../errors/worker-id-unavailable.error';
import { FakeClock } from '../../testing/fake-clock';
import { InMemoryWorkerLeaseStore } from '../../testing/in-memory-worker-lease.store';
import { InMemoryWorkerStateStores } from '../../testing/in-memory-worker-state.store';
import { renewedBound } from './database-lease.committer';
import { DEFAULT_SNOWFLAKE_EPOCH } from './snowflake-layout';
import type { SnowflakeSettings } from './snowflake-settings';
import { SnowflakeWorker } from './snowflake-worker';
import type { SnowflakeWorkerOptions } from './snowflake-worker.options';
import { chooseWorkerLease, type WorkerLeaseRow } from './worker-lease-store.port';
import type { WorkerStateLockHandle } from './worker-state';

const T0 = 1_700_000_000_000;

const row = (workerId: number, holder: string, expiresAt: number): WorkerLeaseRow => ({
  workerId,
  holder,
  run: `run-${holder}`,
  epoch: 1n,
  expiresAt,
  horizon: expiresAt,
});

describe('chooseWorkerLease (the claim rule)', () => {
  it('takes this holder’s expired row first, else the lowest expired, else the lowest free ID', () => {
    const rows = [row(0, 'a', 50), row(1, 'b', 50), row(2, 'c', 500)];
    expect(chooseWorkerLease(rows, 'b', 100, 1023)).toEqual({ kind: 'update', row: rows[1] });
    expect(chooseWorkerLease(rows, 'x', 100, 1023)).toEqual({ kind: 'update', row: rows[0] });
    expect(chooseWorkerLease(rows, 'x', 40, 1023)).toEqual({ kind: 'insert', workerId: 3 });
    expect(chooseWorkerLease([row(1, 'a', 500)], 'x', 40, 1023)).toEqual({
      kind: 'insert',
      workerId: 0,
    });
  });

  it('never takes a live row, not even its own holder’s; full reports the wait to the first expiry', () => {
    const rows = [row(0, 'a', 500), row(1, 'b', 300)];
    expect(chooseWorkerLease(rows, 'a', 100, 1)).toEqual({ kind: 'full', retryInMs: 201 });
    // Expiry is strict: a row is free only once the database's clock is past it.
    expect(chooseWorkerLease(rows, 'a', 300, 1)).toEqual({ kind: 'full', retryInMs: 1 });
    expect(chooseWorkerLease(rows, 'a', 301, 1)).toEqual({ kind: 'update', row: rows[1] });
  });

  it('ignores rows beyond the layout’s largest worker ID', () => {
    expect(chooseWorkerLease([row(5, 'a', 0)], 'a', 100, 3)).toEqual({
      kind: 'insert',
      workerId: 0,
    });
  });
});

describe('renewedBound (the liveness lease on the monotonic clock)', () => {
  const base = { sentWall: 1_000, sentMono: 0, leaseMs: 10_000, marginMs: 1_000 };
  it('grants lease − margin from the time the renewal was sent', () => {
    expect(renewedBound({ ...base, wallNow: 1_020, monoNow: 20 })).toBe(10_000);
  });
  it('a late answer grants what is left of the lease, nothing once it is used up', () => {
    expect(renewedBound({ ...base, wallNow: 9_000, monoNow: 8_000 })).toBe(10_000);
    expect(renewedBound({ ...base, wallNow: 10_500, monoNow: 9_500 })).toBeLessThan(10_500);
  });
  it('a wall clock stepped back during the call gains nothing', () => {
    // 600 ms back: the monotonic clock still says 8 900 ms are left from wall time 500.
    expect(renewedBound({ ...base, wallNow: 500, monoNow: 100 })).toBe(9_400);
  });
});

describe('SnowflakeWorker with worker IDs leased from the database', () => {
  let clock: FakeClock;
  let store: InMemoryWorkerLeaseStore;
  let files: InMemoryWorkerStateStores;
  /** Monotonic time = wall time + this (a wall step changes it, a pause does not). */
  let monoOffset: number;
  const running: SnowflakeWorker[] = [];

  beforeEach(() => {
    clock = new FakeClock(T0);
    store = new InMemoryWorkerLeaseStore(clock);
    files = new InMemoryWorkerStateStores();
    monoOffset = 0;
  });
  afterEach(async () => {
    store.resume();
    store.failWith(null);
    await Promise.all(running.splice(0).map((worker) => worker.stop()));
  });

  function options(
    holder: string,
    callTimeoutMs = 2_000,
    startupMaxWaitMs = 15_000,
  ): SnowflakeWorkerOptions {
    const snowflake: SnowflakeSettings = {
      epoch: DEFAULT_SNOWFLAKE_EPOCH,
      // Two worker IDs: a third instance must wait for one to be free.
      layout: { timestampBits: 41, dataCenterBits: 0, workerBits: 1, sequenceBits: 12 },
      dataCenterId: 0,
      stateDir: 'unused',
      sequenceRandomBound: 0,
      clockBackwardsToleranceMs: 5,
      leaseMs: 10_000,
      heartbeatIntervalMs: 3_000,
      startupMaxWaitMs,
      localRunwayMs: 60_000,
    };
    return {
      name: 'leaf',
      snowflake,
      clock,
      source: new LeaseTableWorkerIdSource({ store, holder, marginMs: 1_000, callTimeoutMs }),
      stateStore: files.factory,
      tickPollMs: 0,
      monotonic: () => clock.now() + monoOffset,
    };
  }

  async function start(
    holder: string,
    callTimeoutMs?: number,
    startupMaxWaitMs?: number,
  ): Promise<SnowflakeWorker> {
    const worker = await clock.drive(
      SnowflakeWorker.start(options(holder, callTimeoutMs, startupMaxWaitMs)),
    );
    running.push(worker);
    return worker;
  }

  /** A kill -9: nothing released; the kernel frees the state lock. */
  async function kill(worker: SnowflakeWorker): Promise<void> {
    running.splice(running.indexOf(worker), 1);
    worker.lease.revoke('killed (test)');
    await (worker as unknown as { parts: { lock: WorkerStateLockHandle } }).parts.lock.release();
  }

  const timestampOf = (worker: SnowflakeWorker, id: bigint) => worker.layout.decode(id).timestamp;

  it('gives instances distinct worker IDs and names the database in the snapshot', async () => {
    const a = await start('a:1');
    const b = await start('b:1');
    expect([a.workerId, b.workerId]).toEqual([0, 1]);
    expect(a.mode).toBe('database');
    expect(a.snapshot().database).toMatchObject({ holder: 'a:1', epoch: '1', lost: null });
    expect(a.lease.reservedUntil).toBe(T0 + 9_000); // lease − margin
    expect((await store.list('leaf'))[0]!.horizon).toBe(T0 + 9_000); // persisted before use
  });

  it('a killed holder’s worker ID is claimed once its row expired, past its horizon: disjoint milliseconds', async () => {
    const a = await start('a:1');
    await start('b:1');
    const first = [await a.generator.next(), await a.generator.next()];
    await a.heartbeat();
    const horizon = (await store.list('leaf'))[0]!.horizon;
    await kill(a);
    const startedAt = clock.now();
    const c = await start('c:1');
    expect(c.workerId).toBe(0);
    // It waited for the row to expire (the database's clock), then past the horizon.
    expect(clock.now()).toBeGreaterThan(horizon);
    expect(clock.now() - startedAt).toBeGreaterThanOrEqual(9_000);
    const next = await c.generator.next();
    expect(timestampOf(c, next)).toBeGreaterThan(
      Math.max(...first.map((id) => timestampOf(a, id))),
    );
    expect(c.snapshot().database?.epoch).toBe('2');
  });

  it('a paused holder whose worker ID was claimed meanwhile stops for good when it resumes', async () => {
    const a = await start('a:1');
    await start('b:1');
    const before = await a.generator.next();
    // Paused past its lease (both clocks move); another instance claims worker 0.
    clock.advance(12_000);
    const c = await start('c:1');
    expect(c.workerId).toBe(0);
    // Resumed: its bound is behind the clock, the renewal finds another epoch.
    const failure = await clock.drive(a.generator.next()).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(TimeLeaseUnavailableError);
    expect((failure as TimeLeaseUnavailableError).code).toBe(LeafErrorCode.TIME_LEASE_UNAVAILABLE);
    expect(a.readiness()).toEqual({
      ready: false,
      reason: expect.stringContaining('claimed by another instance'),
    });
    expect(a.snapshot().database?.lost).toMatch(/epoch 1 is no longer the row's/);
    // Not even a later heartbeat brings it back; the successor's IDs are after the paused one's.
    await expect(a.heartbeat()).rejects.toBeInstanceOf(TimeLeaseUnavailableError);
    expect(timestampOf(c, await c.generator.next())).toBeGreaterThan(timestampOf(a, before));
  });

  it('a stalled database: issuing stops when the lease runs out locally, and resumes when a renewal with the same epoch succeeds', async () => {
    const a = await start('a:1', 50);
    store.stall();
    clock.advance(9_500); // past the bound, renewals unanswered
    await expect(a.heartbeat()).rejects.toBeInstanceOf(TimeLeaseUnavailableError);
    expect(a.readiness().ready).toBe(false);
    await expect(clock.drive(a.generator.next())).rejects.toBeInstanceOf(TimeLeaseUnavailableError);
    store.resume();
    clock.advance(1_000); // past the retry backoff
    await a.heartbeat();
    expect(a.readiness()).toEqual({ ready: true, reason: null });
    await a.generator.next();
    expect(a.snapshot().database?.epoch).toBe('1');
  });

  it('a failing database grants nothing: the bound stays where the last renewal put it', async () => {
    const a = await start('a:1');
    const bound = a.lease.reservedUntil;
    store.failWith(new Error('connection refused'));
    clock.advance(3_000);
    await expect(a.heartbeat()).rejects.toThrow(/connection refused/);
    expect(a.lease.reservedUntil).toBe(bound);
  });

  it('a wall clock stepped back during a renewal does not stretch the lease past its monotonic end', async () => {
    const a = await start('a:1');
    clock.advance(3_000);
    // The wall clock steps back 2 s; the monotonic clock does not.
    monoOffset += 2_000;
    clock.advance(-2_000);
    await a.heartbeat();
    expect(a.lease.reservedUntil).toBeLessThanOrEqual(T0 + 3_000 + 9_000);
  });

  it('a graceful stop releases the row: a successor claims it at once, past the last millisecond used', async () => {
    const a = await start('a:1');
    await start('b:1');
    const last = timestampOf(a, await a.generator.next());
    running.splice(running.indexOf(a), 1);
    await a.stop();
    clock.advance(5);
    const before = clock.now();
    const c = await start('c:1');
    expect(c.workerId).toBe(0);
    expect(clock.now() - before).toBeLessThan(1_000);
    expect((await store.list('leaf'))[0]).toMatchObject({ holder: 'c:1', epoch: 2n });
    expect(timestampOf(c, await c.generator.next())).toBeGreaterThan(last);
  });

  it('refuses to start when no worker ID frees up within startupMaxWaitMs, or the database fails', async () => {
    await start('a:1');
    await start('b:1');
    // Both rows stay live for 10 s; the start waits 5 s at most.
    const refused = start('c:1', undefined, 5_000);
    await expect(refused).rejects.toBeInstanceOf(WorkerIdUnavailableError);
    await expect(refused).rejects.toThrow(/held by a live lease/);
    // A failing database is retried within the start-up wait, then refused naming the failure.
    store.failWith(new Error('access denied'));
    const failing = start('d:1', undefined, 3_000);
    await expect(failing).rejects.toBeInstanceOf(WorkerIdUnavailableError);
    await expect(failing).rejects.toThrow(/failed for 3000 ms \(access denied\)/);
  });

  it('waits for a database that answers only after a while', async () => {
    store.failWith(new Error('connect ECONNREFUSED'));
    const starting = clock.drive(SnowflakeWorker.start(options('a:1')));
    await clock.drive(clock.sleep(2_000));
    store.failWith(null);
    const worker = await starting;
    running.push(worker);
    expect(worker.workerId).toBe(0);
  });
});
