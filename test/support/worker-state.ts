import { promises as fs } from 'node:fs';
import { join } from 'node:path';
import type { WorkerIdentity, WorkerState } from 'nestjs-leaf/ports';
import { workerStateFileName } from '@app/leaf/core/snowflake/worker-state';

/**
 * Writes a snowflake state file for `identity` into `dir`, under the library's own file name
 * (`workerStateFileName`) and in its format (version 2), so a spec can set up what an earlier
 * run would have left. `state` overrides any field, including the identity ones (to fake a
 * file copied from another instance). Returns the file's path.
 */
export async function writeWorkerState(
  dir: string,
  identity: WorkerIdentity,
  state: Partial<WorkerState> & Pick<WorkerState, 'reservedUntil'>,
): Promise<string> {
  const now = Date.now();
  const content: WorkerState = {
    version: 2,
    name: identity.name,
    identity: identity.kind === 'zookeeper' ? `${identity.ip}:${identity.port}` : 'embedded',
    workerId: identity.kind === 'embedded' ? identity.workerId : 0,
    zkNode:
      identity.kind === 'zookeeper'
        ? `/snowflake/${identity.name}/forever/${identity.ip}:${identity.port}-0000000000`
        : null,
    zkSyncedAt: identity.kind === 'zookeeper' ? now - 60_000 : null,
    // The horizon of the last ZooKeeper write, with the default 60 s runway.
    zkHorizon: identity.kind === 'zookeeper' ? (state.zkSyncedAt ?? now - 60_000) + 60_000 : null,
    run: 'earlier-run',
    updatedAt: now - 60_000,
    ...state,
  };
  const path = join(dir, workerStateFileName(identity));
  await fs.mkdir(dir, { recursive: true });
  await fs.writeFile(path, `${JSON.stringify(content, null, 2)}\n`);
  return path;
}

/** Writes raw text where the state file of `identity` belongs (e.g. a torn, corrupt file). */
export async function writeRawWorkerState(
  dir: string,
  identity: WorkerIdentity,
  text: string,
): Promise<string> {
  const path = join(dir, workerStateFileName(identity));
  await fs.mkdir(dir, { recursive: true });
  await fs.writeFile(path, text);
  return path;
}
