/**
 * Stable error codes. Clients and the HTTP layer switch on these, never on message text.
 */
export const LeafErrorCode = {
  CONFIGURATION: 'LEAF_CONFIGURATION',
  INVALID_ARGUMENT: 'LEAF_INVALID_ARGUMENT',
  TAG_NOT_FOUND: 'LEAF_TAG_NOT_FOUND',
  TAG_EXISTS: 'LEAF_TAG_EXISTS',
  UNAUTHORIZED: 'LEAF_UNAUTHORIZED',
  FORBIDDEN: 'LEAF_FORBIDDEN',
  RATE_LIMITED: 'LEAF_RATE_LIMITED',
  MODE_DISABLED: 'LEAF_MODE_DISABLED',
  SEGMENT_NOT_READY: 'LEAF_SEGMENT_NOT_READY',
  SNOWFLAKE_NOT_READY: 'LEAF_SNOWFLAKE_NOT_READY',
  SEGMENT_NOT_INITIALIZED: 'LEAF_SEGMENT_NOT_INITIALIZED',
  ALLOCATION_FAILED: 'LEAF_ALLOCATION_FAILED',
  ALLOCATION_LOCK_TIMEOUT: 'LEAF_ALLOCATION_LOCK_TIMEOUT',
  ALLOCATION_REGRESSED: 'LEAF_ALLOCATION_REGRESSED',
  HIGH_WATER_UNAVAILABLE: 'LEAF_HIGH_WATER_UNAVAILABLE',
  ID_OVERFLOW: 'LEAF_ID_OVERFLOW',
  CLOCK_MOVED_BACKWARDS: 'LEAF_CLOCK_MOVED_BACKWARDS',
  TIMESTAMP_OVERFLOW: 'LEAF_TIMESTAMP_OVERFLOW',
  TIME_LEASE_UNAVAILABLE: 'LEAF_TIME_LEASE_UNAVAILABLE',
  WORKER_ID_UNAVAILABLE: 'LEAF_WORKER_ID_UNAVAILABLE',
  WORKER_ID_EXHAUSTED: 'LEAF_WORKER_ID_EXHAUSTED',
  WORKER_ID_IN_USE: 'LEAF_WORKER_ID_IN_USE',
  DATA_CENTER_HELD: 'LEAF_DATA_CENTER_HELD',
  REGION_LEASE_UNAVAILABLE: 'LEAF_REGION_LEASE_UNAVAILABLE',
  STARTUP_CLOCK_BEHIND: 'LEAF_STARTUP_CLOCK_BEHIND',
  WORKER_STATE_CORRUPT: 'LEAF_WORKER_STATE_CORRUPT',
  WORKER_STATE_LOCKED: 'LEAF_WORKER_STATE_LOCKED',
  SHUTTING_DOWN: 'LEAF_SHUTTING_DOWN',
  SEQUENCE_NO_ISSUER: 'LEAF_SEQUENCE_NO_ISSUER',
  SEQUENCE_LEASE_EXPIRED: 'LEAF_SEQUENCE_LEASE_EXPIRED',
  SEQUENCE_FENCED: 'LEAF_SEQUENCE_FENCED',
  NUMBER_FORMAT_NOT_FOUND: 'LEAF_NUMBER_FORMAT_NOT_FOUND',
  NUMBER_FORMAT_EXISTS: 'LEAF_NUMBER_FORMAT_EXISTS',
  NUMBER_OVERFLOW: 'LEAF_NUMBER_OVERFLOW',
  TAG_RESERVED: 'LEAF_TAG_RESERVED',
  ID_ORIGIN_UNKNOWN: 'LEAF_ID_ORIGIN_UNKNOWN',
  GAPLESS_SERIES_NOT_FOUND: 'LEAF_GAPLESS_SERIES_NOT_FOUND',
  GAPLESS_SERIES_EXISTS: 'LEAF_GAPLESS_SERIES_EXISTS',
  GAPLESS_NOT_RESERVED: 'LEAF_GAPLESS_NOT_RESERVED',
  GAPLESS_KEY_MISMATCH: 'LEAF_GAPLESS_KEY_MISMATCH',
  GAPLESS_SETTLED: 'LEAF_GAPLESS_SETTLED',
  GAPLESS_RESERVATION_EXPIRED: 'LEAF_GAPLESS_RESERVATION_EXPIRED',
  GAPLESS_BUSY: 'LEAF_GAPLESS_BUSY',
  OPAQUE_DISABLED: 'LEAF_OPAQUE_DISABLED',
  OPAQUE_KEY_RETIRED: 'LEAF_OPAQUE_KEY_RETIRED',
  TIME_BEFORE_EPOCH: 'LEAF_TIME_BEFORE_EPOCH',
  TIME_BEYOND_LAYOUT: 'LEAF_TIME_BEYOND_LAYOUT',
} as const;

/** One of {@link LeafErrorCode}'s values. */
export type LeafErrorCode = (typeof LeafErrorCode)[keyof typeof LeafErrorCode];

/**
 * Base class of every error the library throws on purpose.
 *
 * `code` is stable; `leafCode` is the numeric code the Java Leaf returned as an
 * "ID" for the same situation (only where one existed), for clients that migrate;
 * `retryAfterMs` is set when waiting is expected to help.
 */
export abstract class LeafError extends Error {
  /** Stable machine-readable code. */
  abstract readonly code: LeafErrorCode;
  /** Leaf's numeric error code for the same condition, where Leaf had one. */
  readonly leafCode?: number;
  /** A hint for how long a caller should wait before retrying, when that helps. */
  readonly retryAfterMs?: number;

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** An error's message, for a log line or a reason (anything else as text). */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** An error as monitoring shows it: `Name: message` (anything else as text). */
export function errorText(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}
