import { promises as fs } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { silentSnowflakeLogger } from './snowflake-logger';
import { WorkerLeaseCommitter, type LeaseRemote } from './worker-lease.committer';
import { WorkerStateFile } from './worker-state.file';

const T0 = 1_700_000_000_000;
const NODE = '/snowflake/leaf/forever/10.0.0.8:8080-0000000004';

class FakeRemote implements LeaseRemote {
  available = true;
  failure: Error | null = null;
  readonly writes: Array<{ reservedUntil: number; now: number }> = [];
  async write(reservedUntil: number, now: number): Promise<void> {
    if (this.failure) throw this.failure;
    this.writes.push({ reservedUntil, now });
  }
}

describe('WorkerLeaseCommitter', () => {
  let dir: string;
  let file: WorkerStateFile;
  beforeEach(async () => {
    dir = await fs.mkdtemp(path.join(tmpdir(), 'leaf-commit-'));
    file = new WorkerStateFile(dir, {
      kind: 'zookeeper',
      name: 'leaf',
      ip: '10.0.0.8',
      port: 8080,
    });
  });
  afterEach(async () => {
    await fs.rm(dir, { recursive: true, force: true });
  });

  const stored = async () => {
    const result = await file.read();
    if (result.status !== 'ok') throw new Error(`state file ${result.status}`);
    return result.state;
  };

  /** A committer whose state directory cannot be created (a file stands in its path). */
  async function unwritableCommitter(remote: FakeRemote): Promise<WorkerLeaseCommitter> {
    await fs.writeFile(path.join(dir, 'blocker'), '');
    const blocked = new WorkerStateFile(path.join(dir, 'blocker', 'sub'), {
      kind: 'zookeeper',
      name: 'leaf',
      ip: '10.0.0.8',
      port: 8080,
    });
    return new WorkerLeaseCommitter(
      blocked,
      remote,
      { workerId: 4, zkNode: NODE, localRunwayMs: 60_000, lastRemoteWriteAt: T0 },
      silentSnowflakeLogger,
    );
  }

  function committer(
    remote: FakeRemote | null,
    lastRemoteWriteAt: number | null = T0 - 3000,
    localRunwayMs = 60_000,
  ) {
    return new WorkerLeaseCommitter(
      file,
      remote,
      { workerId: 4, zkNode: NODE, localRunwayMs, lastRemoteWriteAt },
      silentSnowflakeLogger,
    );
  }

  it('writes ZooKeeper, then the state file, and grants the full target', async () => {
    const remote = new FakeRemote();
    const c = committer(remote);
    await expect(c.commit(T0 + 10_000, T0, T0 - 1)).resolves.toEqual({
      granted: T0 + 10_000,
      degraded: undefined,
    });
    expect(remote.writes).toEqual([{ reservedUntil: T0 + 10_000, now: T0 }]);
    expect(await stored()).toMatchObject({
      workerId: 4,
      reservedUntil: T0 + 10_000,
      zkNode: NODE,
      zkSyncedAt: T0,
    });
    expect(c.lastRemoteWrite).toBe(T0);
  });

  it('with ZooKeeper down extends in the local file only, up to localRunwayMs after the last ZooKeeper write', async () => {
    const remote = new FakeRemote();
    remote.available = false;
    const c = committer(remote, T0 - 55_000);
    const result = await c.commit(T0 + 10_000, T0, T0 + 1000);
    expect(result.granted).toBe(T0 + 5_000);
    expect(result.degraded).toMatch(/not connected.*local state file only/);
    expect(remote.writes).toHaveLength(0);
    expect(await stored()).toMatchObject({ reservedUntil: T0 + 5_000, zkSyncedAt: T0 - 55_000 });
  });

  it('treats a failed ZooKeeper write like an unreachable ZooKeeper', async () => {
    const remote = new FakeRemote();
    remote.failure = new Error('CONNECTION_LOSS');
    const result = await committer(remote, T0).commit(T0 + 10_000, T0 + 1, T0);
    expect(result.granted).toBe(T0 + 10_000); // still within the runway
    expect(result.degraded).toContain('CONNECTION_LOSS');
  });

  it('grants nothing new once the runway is used up, and never writes a lower bound', async () => {
    const remote = new FakeRemote();
    remote.available = false;
    const result = await committer(remote, T0 - 60_000).commit(T0 + 10_000, T0, T0 + 2000);
    expect(result.granted).toBe(T0);
    expect(result.degraded).toMatch(/runway .* is used up/);
    await expect(file.read()).resolves.toEqual({ status: 'missing' }); // nothing new to record
  });

  it('without any ZooKeeper write known, grants nothing locally', async () => {
    const remote = new FakeRemote();
    remote.available = false;
    const result = await committer(remote, null).commit(T0 + 10_000, T0, T0 - 1);
    expect(result.granted).toBe(Number.NEGATIVE_INFINITY);
  });

  it('never writes a lower bound to ZooKeeper than the one in force (clock stepped back)', async () => {
    const remote = new FakeRemote();
    await committer(remote).commit(T0 - 110_000, T0 - 120_000, T0 + 10_000);
    expect(remote.writes).toEqual([{ reservedUntil: T0 + 10_000, now: T0 - 120_000 }]);
  });

  it('in embedded mode writes the file only', async () => {
    const c = committer(null, null);
    await expect(c.commit(T0 + 10_000, T0, T0 - 1)).resolves.toEqual({
      granted: T0 + 10_000,
      degraded: undefined,
    });
    expect(await stored()).toMatchObject({ reservedUntil: T0 + 10_000, zkSyncedAt: null });
  });

  it('fails when the state file cannot be written, whatever ZooKeeper did', async () => {
    const remote = new FakeRemote();
    const c = await unwritableCommitter(remote);
    await expect(c.commit(T0 + 10_000, T0, T0 - 1)).rejects.toThrow();
    expect(remote.writes).toHaveLength(1); // ZooKeeper ahead of the file is safe: the bound in force did not grow
  });

  it('on release records the final bound in both places, even lower than before', async () => {
    const remote = new FakeRemote();
    const c = committer(remote);
    await c.commit(T0 + 10_000, T0, T0 - 1);
    await c.release(T0 + 42, T0 + 50);
    expect(remote.writes.at(-1)).toEqual({ reservedUntil: T0 + 42, now: T0 + 50 });
    expect(await stored()).toMatchObject({ reservedUntil: T0 + 42, zkSyncedAt: T0 + 50 });
  });

  it('on release never throws', async () => {
    const remote = new FakeRemote();
    remote.failure = new Error('gone');
    const c = await unwritableCommitter(remote);
    await expect(c.release(T0, T0)).resolves.toBeUndefined();
  });
});
