import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { WorkerStateCorruptError } from '../../core/errors/worker-state-corrupt.error';
import {
  identityString,
  parseWorkerState,
  workerStateFileName,
  type WorkerIdentity,
  type WorkerState,
  type WorkerStateLockHandle,
  type WorkerStateReadResult,
  type WorkerStateStore,
  type WorkerStateUpdate,
} from '../../core/snowflake/worker-state';
import { WorkerStateLock } from './worker-state.lock';

/** What to do about a corrupt state file, by its owner's kind. */
const CORRUPT_HINTS: Record<WorkerIdentity['kind'], string> = {
  zookeeper:
    'With ZooKeeper reachable the file is not needed (it is rewritten); without it the instance cannot prove which time its worker ID already used. ' +
    'Restore ZooKeeper, or restore the correct file; delete the file only while ZooKeeper is reachable.',
  database:
    'The lease row in the database is what start-up trusts; the file is ignored and rewritten.',
  embedded:
    'It holds the time lease of the embedded worker ID. Restore the correct file, or delete it after making sure the clock is right and ' +
    "no other instance uses this worker ID; a deleted file means start-up no longer waits for the previous run's lease.",
};

/**
 * The local snowflake state: `{ workerId, reservedUntil, ... }` of one identity, so that a
 * restart while ZooKeeper is down is still time-checked, and so the embedded mode has a
 * time lease at all.
 *
 * Written atomically (temp file, fsync, rename, fsync of the directory): a crash leaves the
 * old or the new content, never a torn one. The file records its identity; a file whose
 * identity does not match (copied from another host or instance) is refused, not used.
 */
export class WorkerStateFile implements WorkerStateStore {
  /** Absolute path of the file. */
  readonly path: string;
  private readonly identity: string;

  constructor(
    /** Directory of the state files (created if missing). */
    readonly dir: string,
    private readonly owner: WorkerIdentity,
  ) {
    this.path = path.resolve(dir, workerStateFileName(owner));
    this.identity = identityString(owner);
  }

  /**
   * Takes `<file>.lock` with an operating-system lock ({@link WorkerStateLock}).
   * @throws {WorkerStateLockedError} when another open file holds it.
   */
  lock(startedAt: number): Promise<WorkerStateLockHandle> {
    return WorkerStateLock.acquire(this.path, startedAt);
  }

  /** Reads and validates the file. Never throws: problems come back as `corrupt`. */
  async read(): Promise<WorkerStateReadResult> {
    let text: string;
    try {
      text = await fs.readFile(this.path, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { status: 'missing' };
      return {
        status: 'corrupt',
        error: this.corrupt(`it cannot be read (${(error as Error).message})`, error),
      };
    }
    let raw: unknown;
    try {
      raw = JSON.parse(text);
    } catch (error) {
      return { status: 'corrupt', error: this.corrupt('it is not valid JSON', error) };
    }
    const parsed = parseWorkerState(raw, this.owner);
    if ('problem' in parsed) return { status: 'corrupt', error: this.corrupt(parsed.problem) };
    return { status: 'ok', state: parsed.state };
  }

  /**
   * Replaces the file atomically and durably with `state` (its identity fields are set
   * from this file's owner).
   * @throws the file system's error; the previous content is then intact.
   */
  async write(state: WorkerStateUpdate): Promise<void> {
    const content: WorkerState = {
      version: 2,
      name: this.owner.name,
      identity: this.identity,
      ...state,
    };
    await fs.mkdir(this.dir, { recursive: true });
    const temp = `${this.path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
    let handle: fs.FileHandle | undefined;
    try {
      handle = await fs.open(temp, 'w', 0o644);
      await handle.writeFile(`${JSON.stringify(content, null, 2)}\n`, 'utf8');
      await handle.sync();
      await handle.close();
      handle = undefined;
      await fs.rename(temp, this.path);
    } catch (error) {
      await handle?.close().catch(() => undefined);
      await fs.rm(temp, { force: true }).catch(() => undefined);
      throw error;
    }
    // The rename is durable only once the directory entry is: fsync the directory too.
    // Windows cannot open a directory for fsync; there the rename is as durable as it gets.
    if (process.platform === 'win32') return;
    const dir = await fs.open(path.dirname(this.path), 'r');
    try {
      await dir.sync();
    } finally {
      await dir.close();
    }
  }

  private corrupt(reason: string, cause?: unknown): WorkerStateCorruptError {
    return new WorkerStateCorruptError(this.path, reason, CORRUPT_HINTS[this.owner.kind], {
      cause,
    });
  }
}
