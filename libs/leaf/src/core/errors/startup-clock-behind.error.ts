import { LeafError, LeafErrorCode } from './leaf.error';

/**
 * At start-up the clock had not passed the time this worker ID may already have used
 * (the persisted time lease), and did not pass it within `startupMaxWaitMs`. Starting would
 * risk repeating IDs of the previous run, so the instance refuses to start.
 */
export class StartupClockBehindError extends LeafError {
  readonly code = LeafErrorCode.STARTUP_CLOCK_BEHIND;
  override readonly retryAfterMs: number;

  constructor(
    /** The worker ID that was going to be used. */
    readonly workerId: number,
    /** The bound the clock must pass, ms since the Unix epoch. */
    readonly bound: number,
    /** The clock reading. */
    readonly now: number,
    /** `bound - now + 1`: how long the clock still has to advance. */
    readonly offsetMs: number,
    /** The configured `startupMaxWaitMs`. */
    readonly maxWaitMs: number,
    /** Where the bound came from (ZooKeeper node, state file, ...). */
    readonly source: string,
  ) {
    super(
      `Snowflake worker ${workerId} refuses to start: the clock (${new Date(now).toISOString()}) is ${offsetMs} ms short of ` +
        `${new Date(bound).toISOString()}, the end of the time already reserved for this worker ID (${source}), and that is more than ` +
        `snowflake.startupMaxWaitMs (${maxWaitMs} ms). IDs issued now could repeat the previous run's. ` +
        'Fix: check the system clock (NTP) and start again after the clock has passed that time; if the clock was deliberately set back, wait until it passes it.',
    );
    this.retryAfterMs = offsetMs;
  }
}
