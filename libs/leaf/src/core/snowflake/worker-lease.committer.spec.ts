import { InMemoryWorkerStateStores } from '../../testing/in-memory-worker-state.store';
import { silentSnowflakeLogger } from './snowflake-logger';
import { WorkerLeaseCommitter, type LeaseRemote } from './worker-lease.committer';
import type { WorkerIdentity, WorkerStateStore } from './worker-state';
import type { WorkerLeaseRecord } from './zookeeper-worker.registry';

const T0 = 1_700_000_000_000;
const NODE = '/snowflake/leaf/forever/10.0.0.8:8080-0000000004';
const RUN = 'run-a';

class FakeRemote implements LeaseRemote {
  available = true;
  fenced: string | null = null;
  failure: Error | null = null;
  /** Set as the write fails, like a write that finds the session expired. */
  fenceOnFailure: string | null = null;
  readonly writes: WorkerLeaseRecord[] = [];
  async write(record: WorkerLeaseRecord): Promise<void> {
    if (this.failure) {
      this.fenced = this.fenceOnFailure ?? this.fenced;
      throw this.failure;
    }
    this.writes.push(record);
  }
}

describe('WorkerLeaseCommitter', () => {
  const identity: WorkerIdentity = { kind: 'zookeeper', name: 'leaf', ip: '10.0.0.8', port: 8080 };
  let file: WorkerStateStore;
  beforeEach(() => {
    file = new InMemoryWorkerStateStores().of(identity);
  });

  const stored = async () => {
    const result = await file.read();
    if (result.status !== 'ok') throw new Error(`state file ${result.status}`);
    return result.state;
  };

  /** A committer whose state cannot be written (a full or read-only disk). */
  async function unwritableCommitter(remote: FakeRemote): Promise<WorkerLeaseCommitter> {
    const blocked: WorkerStateStore = {
      ...file,
      write: () => Promise.reject(new Error('EROFS: read-only file system')),
    };
    return new WorkerLeaseCommitter(
      blocked,
      remote,
      {
        workerId: 4,
        zkNode: NODE,
        localRunwayMs: 60_000,
        run: RUN,
        remote: { writtenAt: T0, horizon: T0 + 60_000 },
      },
      silentSnowflakeLogger,
    );
  }

  /** `horizon`: what the node records at start (`null`: nothing, e.g. a node created now). */
  function committer(
    remote: FakeRemote | null,
    horizon: number | null = T0 + 57_000,
    localRunwayMs = 60_000,
  ) {
    return new WorkerLeaseCommitter(
      file,
      remote,
      {
        workerId: 4,
        zkNode: NODE,
        localRunwayMs,
        run: RUN,
        remote: horizon === null ? null : { writtenAt: horizon - localRunwayMs, horizon },
      },
      silentSnowflakeLogger,
    );
  }

  it('writes ZooKeeper with the bound, a horizon localRunwayMs ahead and its run, then the state file', async () => {
    const remote = new FakeRemote();
    const c = committer(remote);
    await expect(c.commit(T0 + 10_000, T0, T0 - 1)).resolves.toEqual({
      granted: T0 + 10_000,
      degraded: undefined,
    });
    expect(remote.writes).toEqual([
      { timestamp: T0, reservedUntil: T0 + 10_000, horizon: T0 + 60_000, run: RUN },
    ]);
    expect(await stored()).toMatchObject({
      workerId: 4,
      reservedUntil: T0 + 10_000,
      zkNode: NODE,
      zkSyncedAt: T0,
      zkHorizon: T0 + 60_000,
      run: RUN,
    });
    expect(c.lastRemoteWrite).toBe(T0);
    expect(c.recordedHorizon).toBe(T0 + 60_000);
    expect(c.wroteRemote).toBe(true);
  });

  it('records a horizon no lower than the bound when the lease is longer than the runway', async () => {
    const remote = new FakeRemote();
    await committer(remote, null, 1000).commit(T0 + 10_000, T0, T0 - 1);
    expect(remote.writes[0]).toMatchObject({ reservedUntil: T0 + 10_000, horizon: T0 + 10_000 });
  });

  it('with ZooKeeper down extends in the local file only, up to the horizon recorded in ZooKeeper', async () => {
    const remote = new FakeRemote();
    remote.available = false;
    const c = committer(remote, T0 + 5_000);
    const result = await c.commit(T0 + 10_000, T0, T0 + 1000);
    expect(result.granted).toBe(T0 + 5_000);
    expect(result.degraded).toMatch(/not connected.*local state file only.*horizon/);
    expect(remote.writes).toHaveLength(0);
    expect(await stored()).toMatchObject({ reservedUntil: T0 + 5_000, zkHorizon: T0 + 5_000 });
  });

  it("uses the recorded horizon, not this run's own runway, when they differ", async () => {
    const remote = new FakeRemote();
    remote.available = false;
    // The node records a 15 s runway; this run is configured with 60 s.
    const c = committer(remote, T0 + 15_000 - 3000, 60_000);
    const result = await c.commit(T0 + 10_000, T0, T0 + 1000);
    expect(result.granted).toBe(T0 + 10_000);
    const later = await c.commit(T0 + 20_000, T0 + 10_000, T0 + 10_000);
    expect(later.granted).toBe(T0 + 12_000);
  });

  it('treats a failed ZooKeeper write like an unreachable ZooKeeper', async () => {
    const remote = new FakeRemote();
    remote.failure = new Error('CONNECTION_LOSS');
    const result = await committer(remote, T0 + 60_000).commit(T0 + 10_000, T0 + 1, T0);
    expect(result.granted).toBe(T0 + 10_000); // still within the horizon
    expect(result.degraded).toContain('CONNECTION_LOSS');
  });

  it('extends nothing, not even locally, once the session is known to have expired', async () => {
    const remote = new FakeRemote();
    remote.fenced = 'the session expired';
    const result = await committer(remote, T0 + 60_000).commit(T0 + 10_000, T0, T0 + 1000);
    expect(result.granted).toBe(Number.NEGATIVE_INFINITY);
    expect(result.degraded).toMatch(/session expired; no local extension/);
    expect(remote.writes).toHaveLength(0);
    await expect(file.read()).resolves.toEqual({ status: 'missing' });
  });

  it('extends nothing when the write itself finds the session expired', async () => {
    const remote = new FakeRemote();
    remote.failure = new Error('SESSION_EXPIRED');
    remote.fenceOnFailure = 'the session expired';
    const result = await committer(remote, T0 + 60_000).commit(T0 + 10_000, T0, T0 + 1000);
    expect(result.granted).toBe(Number.NEGATIVE_INFINITY);
    await expect(file.read()).resolves.toEqual({ status: 'missing' });
  });

  it('grants nothing new once the horizon is passed, and never writes a lower bound', async () => {
    const remote = new FakeRemote();
    remote.available = false;
    const result = await committer(remote, T0).commit(T0 + 10_000, T0, T0 + 2000);
    expect(result.granted).toBe(T0);
    expect(result.degraded).toMatch(/local runway is used up/);
    await expect(file.read()).resolves.toEqual({ status: 'missing' }); // nothing new to record
  });

  it('without any horizon recorded, grants nothing locally', async () => {
    const remote = new FakeRemote();
    remote.available = false;
    const result = await committer(remote, null).commit(T0 + 10_000, T0, T0 - 1);
    expect(result.granted).toBe(Number.NEGATIVE_INFINITY);
  });

  it('never writes a lower bound to ZooKeeper than the one in force (clock stepped back)', async () => {
    const remote = new FakeRemote();
    await committer(remote).commit(T0 - 110_000, T0 - 120_000, T0 + 10_000);
    expect(remote.writes).toEqual([
      { timestamp: T0 - 120_000, reservedUntil: T0 + 10_000, horizon: T0 + 10_000, run: RUN },
    ]);
  });

  it('in embedded mode writes the file only', async () => {
    const c = committer(null, null);
    await expect(c.commit(T0 + 10_000, T0, T0 - 1)).resolves.toEqual({
      granted: T0 + 10_000,
      degraded: undefined,
    });
    expect(await stored()).toMatchObject({
      reservedUntil: T0 + 10_000,
      zkSyncedAt: null,
      zkHorizon: null,
    });
  });

  it('fails when the state file cannot be written, whatever ZooKeeper did', async () => {
    const remote = new FakeRemote();
    const c = await unwritableCommitter(remote);
    await expect(c.commit(T0 + 10_000, T0, T0 - 1)).rejects.toThrow();
    expect(remote.writes).toHaveLength(1); // ZooKeeper ahead of the file is safe: the bound in force did not grow
  });

  it('on release records the final bound as bound and horizon in both places, even lower than before', async () => {
    const remote = new FakeRemote();
    const c = committer(remote);
    await c.commit(T0 + 10_000, T0, T0 - 1);
    await c.release(T0 + 42, T0 + 50);
    expect(remote.writes.at(-1)).toEqual({
      timestamp: T0 + 50,
      reservedUntil: T0 + 42,
      horizon: T0 + 42,
      run: RUN,
    });
    expect(await stored()).toMatchObject({
      reservedUntil: T0 + 42,
      zkSyncedAt: T0 + 50,
      zkHorizon: T0 + 42,
    });
  });

  it('on release leaves ZooKeeper alone once fenced', async () => {
    const remote = new FakeRemote();
    const c = committer(remote);
    await c.commit(T0 + 10_000, T0, T0 - 1);
    remote.fenced = 'the session expired';
    await c.release(T0 + 42, T0 + 50);
    expect(remote.writes).toHaveLength(1);
    expect(await stored()).toMatchObject({ reservedUntil: T0 + 42, zkHorizon: T0 + 60_000 });
  });

  it('on release never throws', async () => {
    const remote = new FakeRemote();
    remote.failure = new Error('gone');
    const c = await unwritableCommitter(remote);
    await expect(c.release(T0, T0)).resolves.toBeUndefined();
  });
});
