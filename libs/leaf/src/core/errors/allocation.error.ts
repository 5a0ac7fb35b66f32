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
