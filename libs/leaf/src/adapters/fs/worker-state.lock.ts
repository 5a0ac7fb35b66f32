import { promises as fs, constants as fsConstants } from 'node:fs';
import { hostname } from 'node:os';
import * as path from 'node:path';
import { WorkerStateLockedError } from '../../core/errors/worker-state-locked.error';
import { loadOptionalPeer } from '../optional-peer';

/** The part of `fs-native-extensions` used here: an OFD (`fcntl`) lock on Linux, `flock` on BSD/macOS, `LockFileEx` on Windows. */
interface NativeFileLocks {
  tryLock(fd: number, options?: { shared?: boolean }): boolean;
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

  /**
   * Takes the lock of `stateFile` (creating the directory and the lock file if missing).
   * @throws {WorkerStateLockedError} when another open file (another process, or another
   *   worker in this one) holds it.
   * @throws the file system's error when the lock file cannot be opened.
   */
  static async acquire(stateFile: string, startedAt: number): Promise<WorkerStateLock> {
    // Loaded here, so that an application without snowflake mode never loads the addon (an
    // optional peer: `nestjs-leaf/client` installs nothing else).
    const native = loadOptionalPeer<NativeFileLocks>(
      'fs-native-extensions',
      'the snowflake state file lock needs',
      'fs-native-extensions@^1.5.1',
    );
    const lockPath = `${stateFile}.lock`;
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
