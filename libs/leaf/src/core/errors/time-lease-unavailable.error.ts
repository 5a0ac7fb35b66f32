import { LeafError, LeafErrorCode } from './leaf.error';

/**
 * Issuing now would use a timestamp beyond the persisted time lease (`reservedUntil`) and
 * the lease could not be extended durably in time (ZooKeeper unreachable past the local
 * runway, the state file not writable, the worker's registration lost, ...). The generator
 * fails closed instead of issuing IDs a restarted instance could repeat.
 */
export class TimeLeaseUnavailableError extends LeafError {
  readonly code = LeafErrorCode.TIME_LEASE_UNAVAILABLE;
  override readonly retryAfterMs: number;

  constructor(
    /** The worker ID whose lease ran out. */
    readonly workerId: number,
    /** The persisted bound, ms since the Unix epoch. */
    readonly reservedUntil: number,
    /** Why the lease could not be extended. */
    readonly reason: string,
    options?: { cause?: unknown; retryAfterMs?: number },
  ) {
    super(
      `Snowflake worker ${workerId}: the time lease ends at ${reservedUntil} (${new Date(reservedUntil).toISOString()}) and cannot be extended: ${reason}`,
      options,
    );
    this.retryAfterMs = options?.retryAfterMs ?? 1000;
  }
}
