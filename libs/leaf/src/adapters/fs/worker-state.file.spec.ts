import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { LeafErrorCode } from '../../core/errors/leaf.error';
import { WorkerStateCorruptError } from '../../core/errors/worker-state-corrupt.error';
import { workerStateFileName, type WorkerIdentity } from '../../core/snowflake/worker-state';
import { WorkerStateFile } from './worker-state.file';
import { tempDirPerTest } from '../../testing/temp-dir';

const zkIdentity: WorkerIdentity = {
  kind: 'zookeeper',
  name: 'order-ids',
  ip: '10.0.0.8',
  port: 8080,
};
const state = {
  workerId: 7,
  reservedUntil: 1_700_000_010_000,
  zkNode: '/snowflake/order-ids/forever/10.0.0.8:8080-0000000007',
  zkSyncedAt: 1_700_000_000_000,
  zkHorizon: 1_700_000_060_000,
  run: 'a1b2c3',
  updatedAt: 1_700_000_000_000,
};

describe('WorkerStateFile', () => {
  const dir = tempDirPerTest('leaf-state-');

  it('names the file per leaf name and identity', () => {
    expect(workerStateFileName(zkIdentity)).toBe('snowflake-order-ids-10.0.0.8_8080.json');
    expect(workerStateFileName({ kind: 'zookeeper', name: 'leaf', ip: 'fe80::1', port: 80 })).toBe(
      'snowflake-leaf-fe80__1_80.json',
    );
    expect(workerStateFileName({ kind: 'embedded', name: 'leaf', workerId: 12 })).toBe(
      'snowflake-leaf-embedded-12.json',
    );
  });

  it('reports a missing file', async () => {
    await expect(new WorkerStateFile(dir(), zkIdentity).read()).resolves.toEqual({
      status: 'missing',
    });
  });

  it('writes atomically and reads back what it wrote, with its identity', async () => {
    const file = new WorkerStateFile(path.join(dir(), 'nested'), zkIdentity);
    await file.write(state);
    await file.write({ ...state, reservedUntil: state.reservedUntil + 1 });
    const result = await file.read();
    expect(result).toEqual({
      status: 'ok',
      state: {
        version: 2,
        name: 'order-ids',
        identity: '10.0.0.8:8080',
        ...state,
        reservedUntil: state.reservedUntil + 1,
      },
    });
    expect(await fs.readdir(path.join(dir(), 'nested'))).toEqual([
      'snowflake-order-ids-10.0.0.8_8080.json',
    ]); // no temp file left
  });

  it('reads a version 1 file (before run ids and horizons) with neither', async () => {
    const file = new WorkerStateFile(dir(), zkIdentity);
    const { zkHorizon: _h, run: _r, ...v1 } = state;
    await fs.writeFile(
      file.path,
      JSON.stringify({ version: 1, name: 'order-ids', identity: '10.0.0.8:8080', ...v1 }),
    );
    await expect(file.read()).resolves.toEqual({
      status: 'ok',
      state: {
        version: 2,
        name: 'order-ids',
        identity: '10.0.0.8:8080',
        ...v1,
        zkHorizon: null,
        run: null,
      },
    });
  });

  it('keeps two identities in one directory apart', async () => {
    const a = new WorkerStateFile(dir(), zkIdentity);
    const b = new WorkerStateFile(dir(), { ...zkIdentity, port: 8081 } as WorkerIdentity);
    await a.write(state);
    await b.write({ ...state, workerId: 8 });
    expect(await a.read()).toMatchObject({
      status: 'ok',
      state: { workerId: 7, identity: '10.0.0.8:8080' },
    });
    expect(await b.read()).toMatchObject({
      status: 'ok',
      state: { workerId: 8, identity: '10.0.0.8:8081' },
    });
  });

  async function corruptWith(content: string, identity: WorkerIdentity = zkIdentity) {
    const file = new WorkerStateFile(dir(), identity);
    await fs.writeFile(file.path, content);
    const result = await file.read();
    expect(result.status).toBe('corrupt');
    const error = (result as { error: WorkerStateCorruptError }).error;
    expect(error).toBeInstanceOf(WorkerStateCorruptError);
    expect(error.code).toBe(LeafErrorCode.WORKER_STATE_CORRUPT);
    return error;
  }

  it('reports invalid JSON, a torn file and missing fields as corrupt', async () => {
    await corruptWith('{"version":1,"name":"order-');
    await corruptWith('[]');
    await corruptWith(
      JSON.stringify({ version: 1, name: 'order-ids', identity: '10.0.0.8:8080', workerId: 7 }),
    );
    await corruptWith(
      JSON.stringify({ version: 3, name: 'order-ids', identity: '10.0.0.8:8080', ...state }),
    );
    // A version-2 file with one field out of range.
    const v2 = { version: 2, name: 'order-ids', identity: '10.0.0.8:8080', ...state };
    await corruptWith(JSON.stringify({ ...v2, zkHorizon: 'soon' }));
    await corruptWith(JSON.stringify({ ...v2, workerId: 1024 }));
  });

  it('refuses a file that belongs to another identity (copied from another host)', async () => {
    const other = new WorkerStateFile(dir(), { ...zkIdentity, ip: '10.0.0.9' } as WorkerIdentity);
    await other.write(state);
    const copied = await fs.readFile(other.path, 'utf8');
    const error = await corruptWith(copied);
    expect(error.reason).toMatch(/10\.0\.0\.9:8080.*not to.*10\.0\.0\.8:8080/);
  });

  it('refuses an embedded file that records another worker ID', async () => {
    const identity: WorkerIdentity = { kind: 'embedded', name: 'leaf', workerId: 3 };
    const error = await corruptWith(
      JSON.stringify({
        version: 1,
        name: 'leaf',
        identity: 'embedded',
        workerId: 4,
        reservedUntil: 1,
        zkNode: null,
        zkSyncedAt: null,
        updatedAt: 1,
      }),
      identity,
    );
    expect(error.reason).toContain('worker ID 4');
  });
});
