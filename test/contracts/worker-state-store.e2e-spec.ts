/**
 * The WorkerStateStore contract on WorkerStateFile: a real state directory (a temp dir per
 * case), real atomic writes and real operating-system locks.
 */
import { promises as fs } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { WorkerStateFile } from '@app/leaf/adapters/fs/worker-state.file';
import { workerStateFileName } from '@app/leaf/core/snowflake/worker-state';
import { workerStateStoreContract } from '@app/leaf/testing/contracts/worker-state-store.contract';

workerStateStoreContract('WorkerStateFile', async () => {
  const dir = await fs.mkdtemp(path.join(tmpdir(), 'leaf-contract-state-'));
  return {
    storeFor: (identity) => new WorkerStateFile(dir, identity),
    writeRaw: (identity, text) => fs.writeFile(path.join(dir, workerStateFileName(identity)), text),
    close: () => fs.rm(dir, { recursive: true, force: true }),
  };
});
