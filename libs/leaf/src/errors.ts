/**
 * `nestjs-leaf/errors`: every error the library raises. Each is a `LeafError` with a stable
 * `code` (`LeafErrorCode`); `LeafExceptionFilter` answers each with its HTTP status.
 */
export { LeafError, LeafErrorCode } from './core/errors/leaf.error';
export { LeafConfigurationError } from './core/errors/leaf-configuration.error';
export { InvalidArgumentError } from './core/errors/invalid-argument.error';
export { TagNotFoundError } from './core/errors/tag-not-found.error';
export { TagExistsError } from './core/errors/tag-exists.error';
export { TagReservedError } from './core/errors/tag-reserved.error';
export { UnauthorizedError } from './core/errors/unauthorized.error';
export { ForbiddenError } from './core/errors/forbidden.error';
export { RateLimitedError } from './core/errors/rate-limited.error';
export { ModeDisabledError } from './core/errors/mode-disabled.error';
export { OpaqueDisabledError, OpaqueKeyRetiredError } from './core/errors/opaque.error';
export { SegmentNotReadyError } from './core/errors/segment-not-ready.error';
export { SnowflakeNotReadyError } from './core/errors/snowflake-not-ready.error';
export { SegmentNotInitializedError } from './core/errors/segment-not-initialized.error';
export {
  AllocationError,
  AllocationLockTimeoutError,
  AllocationRegressedError,
  IdOverflowError,
} from './core/errors/allocation.error';
export { ShuttingDownError } from './core/errors/shutting-down.error';
export {
  NumberFormatExistsError,
  NumberFormatNotFoundError,
  NumberOverflowError,
} from './core/errors/number-format.error';
// Every gapless error (the module exports nothing else).
export * from './core/errors/gapless.error';
export { ClockMovedBackwardsError } from './core/errors/clock-moved-backwards.error';
export { TimestampOverflowError } from './core/errors/timestamp-overflow.error';
export {
  TimeBeforeEpochError,
  TimeBeyondLayoutError,
} from './core/errors/time-outside-layout.error';
export { TimeLeaseUnavailableError } from './core/errors/time-lease-unavailable.error';
export {
  SequenceFencedError,
  SequenceLeaseExpiredError,
  SequenceNoIssuerError,
} from './core/errors/sequence.error';
export { WorkerIdUnavailableError } from './core/errors/worker-id-unavailable.error';
export { WorkerIdExhaustedError } from './core/errors/worker-id-exhausted.error';
export { WorkerIdInUseError } from './core/errors/worker-id-in-use.error';
export { DataCenterHeldError, RegionLeaseUnavailableError } from './core/errors/region-lease.error';
export { StartupClockBehindError } from './core/errors/startup-clock-behind.error';
export { WorkerStateCorruptError } from './core/errors/worker-state-corrupt.error';
export { WorkerStateLockedError } from './core/errors/worker-state-locked.error';
export { RemoteLeafError } from './core/errors/remote-leaf.error';
export { IdOriginUnknownError } from './core/errors/id-origin-unknown.error';
export { leafErrorBody, leafErrorStatus } from './nest/http/leaf-exception.filter';
export { REDACTED, redactSecrets } from './core/redact';
