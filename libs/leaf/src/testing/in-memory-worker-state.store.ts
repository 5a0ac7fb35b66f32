import { WorkerStateCorruptError } from '../core/errors/worker-state-corrupt.error';
import { WorkerStateLockedError } from '../core/errors/worker-state-locked.error';
import {
  identityString,
  parseWorkerState,
  workerStateFileName,
  type WorkerIdentity,
  type WorkerStateLockHandle,
  type WorkerStateReadResult,
  type WorkerStateStore,
  type WorkerStateStoreFactory,
  type WorkerStateUpdate,
} from '../core/snowflake/worker-state';

/**
 * In-memory {@link WorkerStateStore}s, one per identity, sharing one "directory": for unit
 * tests of snowflake workers without a file system. It passes the same contract suite as
 * the file store (`contracts/worker-state-store.contract.ts`): exclusive locks, validation
 * of what is read, atomic replacement.
 */
export class InMemoryWorkerStateStores {
  private readonly contents = new Map<string, string>();
  /** Lock token and what the lock "file" says about its holder, per state. */
  private readonly locks = new Map<string, { token: number; holder: string }>();
  private nextLock = 1;

  /** The factory to pass as `stateStore`. */
  readonly factory: WorkerStateStoreFactory = (identity) => this.of(identity);

  /** The store of `identity`. */
  of(identity: WorkerIdentity): WorkerStateStore {
    const key = workerStateFileName(identity);
    const { contents, locks } = this;
    const nextToken = () => this.nextLock++;
    return {
      path: `memory:${key}`,
      async lock(startedAt: number): Promise<WorkerStateLockHandle> {
        const held = locks.get(key);
        // Like the lock file, the error names the holder, not the caller.
        if (held) throw new WorkerStateLockedError(`memory:${key}.lock`, held.holder);
        const token = nextToken();
        locks.set(key, { token, holder: JSON.stringify({ startedAt }) });
        return {
          path: `memory:${key}.lock`,
          release: async () => {
            if (locks.get(key)?.token === token) locks.delete(key);
          },
        };
      },
      async read(): Promise<WorkerStateReadResult> {
        const text = contents.get(key);
        if (text === undefined) return { status: 'missing' };
        let raw: unknown;
        try {
          raw = JSON.parse(text);
        } catch (error) {
          return { status: 'corrupt', error: corrupt(key, 'it is not valid JSON', error) };
        }
        const parsed = parseWorkerState(raw, identity);
        if ('problem' in parsed) return { status: 'corrupt', error: corrupt(key, parsed.problem) };
        return { status: 'ok', state: parsed.state };
      },
      async write(state: WorkerStateUpdate): Promise<void> {
        contents.set(
          key,
          JSON.stringify({
            version: 2,
            name: identity.name,
            identity: identityString(identity),
            ...state,
          }),
        );
      },
    };
  }

  /** The raw content of `identity`'s state, `undefined` when there is none. */
  raw(identity: WorkerIdentity): string | undefined {
    return this.contents.get(workerStateFileName(identity));
  }

  /** Deletes `identity`'s state (a lost disk). */
  remove(identity: WorkerIdentity): void {
    this.contents.delete(workerStateFileName(identity));
  }

  /** Replaces the raw content of `identity`'s state (to fake a torn or copied file). */
  setRaw(identity: WorkerIdentity, text: string): void {
    this.contents.set(workerStateFileName(identity), text);
  }
}

function corrupt(key: string, reason: string, cause?: unknown): WorkerStateCorruptError {
  return new WorkerStateCorruptError(`memory:${key}`, reason, 'Test store.', { cause });
}
