import { LeafError, LeafErrorCode } from './leaf.error';

/**
 * A persisted snowflake worker state cannot be trusted: the local state file or the
 * ZooKeeper node data is unreadable, malformed, or belongs to another identity (for example
 * a state file copied from another host). The instance refuses to start rather than guess.
 */
export class WorkerStateCorruptError extends LeafError {
  readonly code = LeafErrorCode.WORKER_STATE_CORRUPT;

  constructor(
    /** File path or ZooKeeper node path of the state. */
    readonly source: string,
    /** What is wrong with it. */
    readonly reason: string,
    /** What an operator can do. */
    readonly remedy: string,
    options?: { cause?: unknown },
  ) {
    super(`Snowflake worker state ${source} cannot be used: ${reason}. ${remedy}`, options);
  }
}
