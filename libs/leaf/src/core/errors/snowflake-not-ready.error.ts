import { LeafError, LeafErrorCode } from './leaf.error';

/**
 * The synchronous snowflake call could not issue an ID without waiting: the millisecond's
 * 4,096 sequences are used up, the clock is behind the last millisecond, or the time lease
 * must be extended first. The asynchronous call waits these out; nothing was consumed.
 */
export class SnowflakeNotReadyError extends LeafError {
  readonly code = LeafErrorCode.SNOWFLAKE_NOT_READY;
  override readonly retryAfterMs = 1;

  constructor(options?: { cause?: unknown }) {
    super('No snowflake ID can be issued without waiting; use get() to wait for one', options);
  }
}
