import { LeafError, LeafErrorCode } from './leaf.error';

/**
 * Taking a range from the database failed. The transaction was rolled back, or its
 * outcome is unknown; either way the range is abandoned and never handed out.
 */
export class AllocationError extends LeafError {
  readonly code: LeafErrorCode = LeafErrorCode.ALLOCATION_FAILED;
  override readonly retryAfterMs: number = 1000;

  constructor(
    readonly tag: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** The row lock was held by another session past the lock-wait timeout, or a deadlock was detected. */
export class AllocationLockTimeoutError extends AllocationError {
  override readonly code = LeafErrorCode.ALLOCATION_LOCK_TIMEOUT;

  constructor(tag: string, options?: { cause?: unknown }) {
    super(tag, `Timed out waiting for the leaf_alloc row lock of tag "${tag}"`, options);
  }
}

/**
 * The database granted a range that is not above what this instance already holds: its
 * `max_id` went back (an old backup restored, a hand edit, a failover to a lagging
 * replica). The range is refused and never served; the allocation was committed, so
 * `max_id` moved forward and a later allocation clears this instance's ranges by itself
 * (docs/design.md, segment invariants).
 */
export class AllocationRegressedError extends AllocationError {
  override readonly code = LeafErrorCode.ALLOCATION_REGRESSED;

  constructor(
    tag: string,
    /** First ID of the refused range. */
    readonly start: bigint,
    /** Exclusive end of the refused range (the `max_id` the database read back). */
    readonly end: bigint,
    /** The end of the highest range this instance held when it asked. */
    readonly heldUpTo: bigint,
  ) {
    super(
      tag,
      `Tag "${tag}": the database granted [${start}, ${end}), which is not above the ranges ` +
        `this instance already holds (up to ${heldUpTo}); max_id went back. Refused, never served`,
    );
  }
}

/**
 * The tag's high-water mark (ZooKeeper, `segment.highWater`) could not be read or written,
 * or kept changing under the allocation: the allocation was rolled back and no range was
 * granted. IDs already in memory are still served (docs/design.md, "High-water mark").
 */
export class HighWaterUnavailableError extends AllocationError {
  override readonly code = LeafErrorCode.HIGH_WATER_UNAVAILABLE;

  constructor(tag: string, reason: string, options?: { cause?: unknown }) {
    super(
      tag,
      `Tag "${tag}": the high-water mark is unavailable (${reason}); no range was granted`,
      options,
    );
  }
}

/** Advancing `max_id` would pass 2^63-1. Nothing was written. */
export class IdOverflowError extends LeafError {
  readonly code = LeafErrorCode.ID_OVERFLOW;

  constructor(
    readonly tag: string,
    readonly maxId: bigint,
    readonly step: number,
  ) {
    super(`Tag "${tag}" cannot advance max_id ${maxId} by ${step}: it would pass 2^63-1`);
  }
}
