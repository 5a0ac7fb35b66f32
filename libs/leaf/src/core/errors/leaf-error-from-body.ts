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
  const error = build(code as LeafErrorCode, text, statusCode, context, {
    leafCode: typeof leafCode === 'number' ? leafCode : undefined,
    // A Retry-After in seconds; an HTTP date or anything else is left out.
    retryAfterMs: /^\d{1,6}$/.test(retryAfterSeconds ?? '')
      ? Number(retryAfterSeconds) * 1000
      : undefined,
  });
  error.message = text;
  return error;
}

/** The errors rebuilt from the request's key alone. */
const BY_KEY: Partial<Record<LeafErrorCode, new (key: string) => LeafError>> = {
  [LeafErrorCode.TAG_NOT_FOUND]: TagNotFoundError,
  [LeafErrorCode.GAPLESS_SERIES_NOT_FOUND]: GaplessSeriesNotFoundError,
  [LeafErrorCode.GAPLESS_SERIES_EXISTS]: GaplessSeriesExistsError,
  [LeafErrorCode.SEGMENT_NOT_READY]: SegmentNotReadyError,
  [LeafErrorCode.ALLOCATION_LOCK_TIMEOUT]: AllocationLockTimeoutError,
  [LeafErrorCode.NUMBER_FORMAT_NOT_FOUND]: NumberFormatNotFoundError,
  [LeafErrorCode.NUMBER_FORMAT_EXISTS]: NumberFormatExistsError,
};

function build(
  code: LeafErrorCode,
  message: string,
  statusCode: number,
  { mode, key, gapless }: RemoteRequestContext,
  details: { leafCode?: number; retryAfterMs?: number },
): LeafError {
  // The numbers a gapless error names that the request did not: the message's (ours).
  const named = () => /number (\d+)/.exec(message)?.[1] ?? gapless?.number ?? '';
  const byKey = BY_KEY[code];
  if (byKey) return new byKey(key);
  switch (code) {
    case LeafErrorCode.INVALID_ARGUMENT:
      return new InvalidArgumentError(message, 'request');
    case LeafErrorCode.UNAUTHORIZED:
      return new UnauthorizedError(message);
    case LeafErrorCode.FORBIDDEN:
      return new ForbiddenError(message);
    case LeafErrorCode.RATE_LIMITED:
      // Without a usable Retry-After, one second: the client's quota refills continuously.
      return new RateLimitedError(message, details.retryAfterMs ?? 1000);
    case LeafErrorCode.MODE_DISABLED:
      return new ModeDisabledError(mode);
    case LeafErrorCode.GAPLESS_NOT_RESERVED:
      return new GaplessNotReservedError(key, gapless?.key ?? '');
    case LeafErrorCode.GAPLESS_KEY_MISMATCH:
      return new GaplessKeyMismatchError(key, gapless?.key ?? '', gapless?.number ?? '', named());
    case LeafErrorCode.GAPLESS_SETTLED:
      return new GaplessSettledError(
        key,
        named(),
        / is (confirmed|voided)/.exec(message)?.[1] ?? '',
      );
    case LeafErrorCode.GAPLESS_RESERVATION_EXPIRED:
      return new GaplessReservationExpiredError(key, named());
    case LeafErrorCode.GAPLESS_BUSY:
      return new GaplessBusyError(key, 0);
    case LeafErrorCode.OPAQUE_DISABLED:
      return new OpaqueDisabledError(message.replace(/^opaque IDs are off: /, ''));
    case LeafErrorCode.OPAQUE_KEY_RETIRED:
      return new OpaqueKeyRetiredError(Number(/version (\d+)/.exec(message)?.[1] ?? 0));
    case LeafErrorCode.SNOWFLAKE_NOT_READY:
      return new SnowflakeNotReadyError();
    case LeafErrorCode.SEGMENT_NOT_INITIALIZED:
      return new SegmentNotInitializedError();
    case LeafErrorCode.ALLOCATION_FAILED:
      return new AllocationError(key, message);
    case LeafErrorCode.SEQUENCE_NO_ISSUER:
      return new SequenceNoIssuerError(key, message, details);
    case LeafErrorCode.SEQUENCE_LEASE_EXPIRED:
      return new SequenceLeaseExpiredError(key, message, details);
    case LeafErrorCode.SHUTTING_DOWN:
      return new ShuttingDownError();
    case LeafErrorCode.TIME_BEFORE_EPOCH:
    case LeafErrorCode.TIME_BEYOND_LAYOUT: {
      // The time asked for and the layout's limit: the message's first two numbers (ours).
      const [time, limit] = [...message.matchAll(/-?\d+/g)].map(([n]) => Number(n));
      if (time === undefined || limit === undefined) break;
      return code === LeafErrorCode.TIME_BEFORE_EPOCH
        ? new TimeBeforeEpochError(time, limit)
        : new TimeBeyondLayoutError(time, limit);
    }
  }
  return new RemoteLeafError(code, message, statusCode, details);
}
