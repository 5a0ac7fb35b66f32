import type { LeafMode } from '../id.service';
import { SequenceLeaseExpiredError, SequenceNoIssuerError } from './sequence.error';
import { AllocationError, AllocationLockTimeoutError } from './allocation.error';
import { InvalidArgumentError } from './invalid-argument.error';
import { LeafError, LeafErrorCode } from './leaf.error';
import { ModeDisabledError } from './mode-disabled.error';
import { NumberFormatExistsError, NumberFormatNotFoundError } from './number-format.error';
import { RemoteLeafError } from './remote-leaf.error';
import { SegmentNotInitializedError } from './segment-not-initialized.error';
import { SegmentNotReadyError } from './segment-not-ready.error';
import { ShuttingDownError } from './shutting-down.error';
import { SnowflakeNotReadyError } from './snowflake-not-ready.error';
import { TagNotFoundError } from './tag-not-found.error';
import { UnauthorizedError } from './unauthorized.error';
import { ForbiddenError } from './forbidden.error';
import {
  GaplessBusyError,
  GaplessKeyMismatchError,
  GaplessNotReservedError,
  GaplessReservationExpiredError,
  GaplessSeriesExistsError,
  GaplessSeriesNotFoundError,
  GaplessSettledError,
} from './gapless.error';
import { RateLimitedError } from './rate-limited.error';
import { OpaqueDisabledError, OpaqueKeyRetiredError } from './opaque.error';
import { TimeBeforeEpochError, TimeBeyondLayoutError } from './time-outside-layout.error';

/** What the request was about, for the error classes that name it. */
export interface RemoteRequestContext {
  /** The mode, or `gapless` for a call on a gapless series. */
  readonly mode: LeafMode | 'gapless';
  /** The tag, or the gapless series. */
  readonly key: string;
  /** A gapless call's idempotency key and number (decimal), where it names them. */
  readonly gapless?: { readonly key: string; readonly number?: string };
}

const CODES = new Set<string>(Object.values(LeafErrorCode));

/**
 * Rebuilds the {@link LeafError} a Leaf server sent as a JSON error body
 * (`{statusCode, code, message, leafCode?}`, the exception filter's format): the library's own
 * class where the body and the request say enough to build it (`TagNotFoundError`,
 * `SegmentNotReadyError`, ...), otherwise a {@link RemoteLeafError} with the same `code`.
 * The server's message is kept. `null` when the body is not a Leaf error (another server, a
 * proxy's page, `LEAF_INTERNAL`, `LEAF_HTTP_<status>`).
 */
export function leafErrorFromBody(
  statusCode: number,
  body: string,
  context: RemoteRequestContext,
  retryAfterSeconds?: string,
): LeafError | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return null;
  }
  if (typeof parsed !== 'object' || parsed === null) return null;
  const { code, message, leafCode } = parsed as Record<string, unknown>;
  if (typeof code !== 'string' || !CODES.has(code)) return null;
  const text = typeof message === 'string' ? message : code;
  const details = {
    leafCode: typeof leafCode === 'number' ? leafCode : undefined,
    // A Retry-After in seconds; an HTTP date or anything else is left out.
    retryAfterMs: /^\d{1,6}$/.test(retryAfterSeconds ?? '')
      ? Number(retryAfterSeconds) * 1000
      : undefined,
  };
  const error =
    BUILD[code as LeafErrorCode]?.({ ...context, message: text, details }) ??
    new RemoteLeafError(code as LeafErrorCode, text, statusCode, details);
  error.message = text;
  return error;
}

/** What a class is rebuilt from: the request, and the server's message and details. */
interface Reply extends RemoteRequestContext {
  readonly message: string;
  readonly details: { leafCode?: number; retryAfterMs?: number };
}

/** The number a gapless error names that the request did not: the message's (ours). */
const named = (r: Reply) => /number (\d+)/.exec(r.message)?.[1] ?? r.gapless?.number ?? '';

/** The time asked for and the layout's limit: the message's first two numbers (ours). */
function timeAndLimit(
  message: string,
  error: new (time: number, limit: number) => LeafError,
): LeafError | null {
  const [time, limit] = [...message.matchAll(/-?\d+/g)].map(([n]) => Number(n));
  return time === undefined || limit === undefined ? null : new error(time, limit);
}

/** The library's own class of each code the body and the request say enough to build. */
const BUILD: Partial<Record<LeafErrorCode, (reply: Reply) => LeafError | null>> = {
  [LeafErrorCode.TAG_NOT_FOUND]: ({ key }) => new TagNotFoundError(key),
  [LeafErrorCode.GAPLESS_SERIES_NOT_FOUND]: ({ key }) => new GaplessSeriesNotFoundError(key),
  [LeafErrorCode.GAPLESS_SERIES_EXISTS]: ({ key }) => new GaplessSeriesExistsError(key),
  [LeafErrorCode.SEGMENT_NOT_READY]: ({ key }) => new SegmentNotReadyError(key),
  [LeafErrorCode.ALLOCATION_LOCK_TIMEOUT]: ({ key }) => new AllocationLockTimeoutError(key),
  [LeafErrorCode.NUMBER_FORMAT_NOT_FOUND]: ({ key }) => new NumberFormatNotFoundError(key),
  [LeafErrorCode.NUMBER_FORMAT_EXISTS]: ({ key }) => new NumberFormatExistsError(key),
  [LeafErrorCode.INVALID_ARGUMENT]: ({ message }) => new InvalidArgumentError(message, 'request'),
  [LeafErrorCode.UNAUTHORIZED]: ({ message }) => new UnauthorizedError(message),
  [LeafErrorCode.FORBIDDEN]: ({ message }) => new ForbiddenError(message),
  // Without a usable Retry-After, one second: the client's quota refills continuously.
  [LeafErrorCode.RATE_LIMITED]: ({ message, details }) =>
    new RateLimitedError(message, details.retryAfterMs ?? 1000),
  [LeafErrorCode.MODE_DISABLED]: ({ mode }) => new ModeDisabledError(mode),
  [LeafErrorCode.GAPLESS_NOT_RESERVED]: ({ key, gapless }) =>
    new GaplessNotReservedError(key, gapless?.key ?? ''),
  [LeafErrorCode.GAPLESS_KEY_MISMATCH]: (r) =>
    new GaplessKeyMismatchError(r.key, r.gapless?.key ?? '', r.gapless?.number ?? '', named(r)),
  [LeafErrorCode.GAPLESS_SETTLED]: (r) =>
    new GaplessSettledError(r.key, named(r), / is (confirmed|voided)/.exec(r.message)?.[1] ?? ''),
  [LeafErrorCode.GAPLESS_RESERVATION_EXPIRED]: (r) =>
    new GaplessReservationExpiredError(r.key, named(r)),
  [LeafErrorCode.GAPLESS_BUSY]: ({ key }) => new GaplessBusyError(key, 0),
  [LeafErrorCode.OPAQUE_DISABLED]: ({ message }) =>
    new OpaqueDisabledError(message.replace(/^opaque IDs are off: /, '')),
  [LeafErrorCode.OPAQUE_KEY_RETIRED]: ({ message }) =>
    new OpaqueKeyRetiredError(Number(/version (\d+)/.exec(message)?.[1] ?? 0)),
  [LeafErrorCode.SNOWFLAKE_NOT_READY]: () => new SnowflakeNotReadyError(),
  [LeafErrorCode.SEGMENT_NOT_INITIALIZED]: () => new SegmentNotInitializedError(),
  [LeafErrorCode.ALLOCATION_FAILED]: ({ key, message }) => new AllocationError(key, message),
  [LeafErrorCode.SEQUENCE_NO_ISSUER]: ({ key, message, details }) =>
    new SequenceNoIssuerError(key, message, details),
  [LeafErrorCode.SEQUENCE_LEASE_EXPIRED]: ({ key, message, details }) =>
    new SequenceLeaseExpiredError(key, message, details),
  [LeafErrorCode.SHUTTING_DOWN]: () => new ShuttingDownError(),
  [LeafErrorCode.TIME_BEFORE_EPOCH]: ({ message }) => timeAndLimit(message, TimeBeforeEpochError),
  [LeafErrorCode.TIME_BEYOND_LAYOUT]: ({ message }) => timeAndLimit(message, TimeBeyondLayoutError),
};
