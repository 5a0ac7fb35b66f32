import { LeafError, LeafErrorCode } from './leaf.error';

/**
 * Another running process holds the lock of this snowflake state file: it runs the same
 * identity (the same `ip:port`, or the same embedded worker ID) on the same state
 * directory. Both would issue IDs with one worker ID, so this one refuses to start. The
 * lock is an operating-system lock held for the whole life of the process: a paused
 * process keeps it, and it is released the moment the process ends, however it ends.
 */
export class WorkerStateLockedError extends LeafError {
  readonly code = LeafErrorCode.WORKER_STATE_LOCKED;

  constructor(
    /** The lock file. */
    readonly lockPath: string,
    /** What the lock file says about its holder (pid, start time), when it could be read. */
    readonly holder: string | null,
    options?: { cause?: unknown },
  ) {
    super(
      `Another running process holds the snowflake state lock ${lockPath}${holder ? ` (${holder})` : ''}: ` +
        'it runs the same identity on the same state directory, and two such processes would issue duplicate IDs, so this one refuses to start. ' +
        'Fix: stop the other process (a paused process keeps the lock until it ends), or give this instance its own identity ' +
        '(LEAF_SNOWFLAKE_ADVERTISE with ZooKeeper, LEAF_WORKER_ID embedded) and, for a second instance on this host, its own LEAF_STATE_DIR.',
      options,
    );
  }
}
