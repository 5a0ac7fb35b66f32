import { promises as fs, constants as fsConstants } from 'node:fs';
import { hostname } from 'node:os';
import * as path from 'node:path';
import { LeafConfigurationError } from '../../core/errors/leaf-configuration.error';
import { WorkerStateLockedError } from '../../core/errors/worker-state-locked.error';

/** The part of `fs-native-extensions` used here: an OFD (`fcntl`) lock on Linux, `flock` on BSD/macOS, `LockFileEx` on Windows. */
interface NativeFileLocks {
  tryLock(fd: number, options?: { shared?: boolean }): boolean;
}

let nativeLocks: NativeFileLocks | undefined;

/**
 * Loaded on first use, so that an application without snowflake mode never loads the addon.
 * It is an optional peer dependency (so that `nestjs-leaf/client` installs nothing else): a
 * missing package is a configuration error that says what to install.
 */
function locks(): NativeFileLocks {
  if (nativeLocks) return nativeLocks;
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    nativeLocks = require('fs-native-extensions') as NativeFileLocks;
  } catch (error) {
    if (!isMissing(error, 'fs-native-extensions')) throw error;
    throw new LeafConfigurationError([
      'the snowflake state file lock needs fs-native-extensions (an optional peer dependency of nestjs-leaf): npm install fs-native-extensions@^1.5.1',
    ]);
  }
  return nativeLocks;
}

/** True when `error` is Node's "Cannot find module" for the package `name` itself. */
function isMissing(error: unknown, name: string): boolean {
  return (
    error instanceof Error &&
    (error as NodeJS.ErrnoException).code === 'MODULE_NOT_FOUND' &&
    error.message.includes(`'${name}'`)
  );
}

/**
 * The exclusive lock of one snowflake state file (docs/design.md, "One process per state
 * file"): `<state file>.lock`, locked with an operating-system file lock for the whole life
 * of the worker.
 *
 * - A second process (or a second worker in the same process: the lock belongs to the open
 *   file, not to the process) cannot take it: start-up refuses with
 *   {@link WorkerStateLockedError}.
 * - A paused process (SIGSTOP, a stalled VM) keeps it; the kernel releases it the moment
 *   the process ends, however it ends (kill -9, a crash, OOM), so nothing is ever stale.
 * - Holding it proves that no other run on this state directory is alive: start-up relies
 *   on that to trust what the previous run recorded here.
 *
 * The lock file is never renamed (the state file is, on every write, which would drop a lock
 * taken on it). Its content is informative only: the holder's pid, host and start time.
 */
export class WorkerStateLock {
  private constructor(
    /** Absolute path of the lock file. */
    readonly path: string,
    private handle: fs.FileHandle | null,
  ) {}

  /** The lock file of the state file `stateFile`. */
  static pathFor(stateFile: string): string {
    return `${stateFile}.lock`;
  }

  /**
   * Takes the lock of `stateFile` (creating the directory and the lock file if missing).
   * @throws {WorkerStateLockedError} when another open file (another process, or another
   *   worker in this one) holds it.
   * @throws the file system's error when the lock file cannot be opened.
   */
  static async acquire(stateFile: string, startedAt: number): Promise<WorkerStateLock> {
    const native = locks();
    const lockPath = WorkerStateLock.pathFor(stateFile);
    await fs.mkdir(path.dirname(lockPath), { recursive: true });
    const handle = await fs.open(lockPath, fsConstants.O_RDWR | fsConstants.O_CREAT, 0o644);
    let locked: boolean;
    try {
      locked = native.tryLock(handle.fd);
    } catch (error) {
      await handle.close();
      throw error;
    }
    if (!locked) {
      const holder = await handle.readFile('utf8').catch(() => '');
      await handle.close();
      throw new WorkerStateLockedError(lockPath, holder.trim() || null);
    }
    try {
      const info = JSON.stringify({ pid: process.pid, host: hostname(), startedAt });
      await handle.truncate(0);
      await handle.write(`${info}\n`, 0, 'utf8');
    } catch {
      // The content is informative only; the lock is what counts.
    }
    return new WorkerStateLock(lockPath, handle);
  }

  /** True until {@link release}. */
  get held(): boolean {
    return this.handle !== null;
  }

  /** Releases the lock (closes the file; the lock file stays). Never throws. */
  async release(): Promise<void> {
    const handle = this.handle;
    this.handle = null;
    await handle?.close().catch(() => undefined);
  }
}
