import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { LeafErrorCode } from '../../core/errors/leaf.error';
import { WorkerStateLockedError } from '../../core/errors/worker-state-locked.error';
import { WorkerStateLock } from './worker-state.lock';
import { tempDirPerTest } from '../../testing/temp-dir';

describe('WorkerStateLock', () => {
  const dir = tempDirPerTest('leaf-lock-');
  let stateFile: string;
  beforeEach(() => {
    stateFile = path.join(dir(), 'nested', 'snowflake-leaf-embedded-3.json');
  });

  it('is exclusive, even within one process, and names its holder', async () => {
    const first = await WorkerStateLock.acquire(stateFile, 42);
    expect(first.path).toBe(`${stateFile}.lock`);
    const error = await WorkerStateLock.acquire(stateFile, 43).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(WorkerStateLockedError);
    expect(error).toMatchObject({
      code: LeafErrorCode.WORKER_STATE_LOCKED,
      lockPath: `${stateFile}.lock`,
    });
    expect(JSON.parse((error as WorkerStateLockedError).holder!)).toMatchObject({
      pid: process.pid,
      startedAt: 42,
    });
    await first.release();
    expect(first.held).toBe(false);
    const second = await WorkerStateLock.acquire(stateFile, 44);
    expect(second.held).toBe(true);
    await second.release();
    await second.release(); // idempotent
  });

  it('locks each state file on its own', async () => {
    const a = await WorkerStateLock.acquire(stateFile, 1);
    const b = await WorkerStateLock.acquire(`${stateFile}-other`, 1);
    await Promise.all([a.release(), b.release()]);
  });

  it('without fs-native-extensions (an optional peer) refuses with a LeafConfigurationError that says what to install', async () => {
    let isolated!: typeof import('./worker-state.lock');
    jest.isolateModules(() => {
      jest.doMock('fs-native-extensions', () => {
        const error = new Error(
          "Cannot find module 'fs-native-extensions'",
        ) as NodeJS.ErrnoException;
        error.code = 'MODULE_NOT_FOUND';
        throw error;
      });
      isolated = jest.requireActual('./worker-state.lock');
    });
    const error = await isolated.WorkerStateLock.acquire(stateFile, 1).catch((e: unknown) => e);
    expect(error).toMatchObject({
      code: LeafErrorCode.CONFIGURATION,
      message: expect.stringContaining('npm install fs-native-extensions@^1.5.1'),
    });
    await expect(fs.stat(path.dirname(stateFile))).rejects.toMatchObject({ code: 'ENOENT' });
    jest.dontMock('fs-native-extensions');
  });
});
