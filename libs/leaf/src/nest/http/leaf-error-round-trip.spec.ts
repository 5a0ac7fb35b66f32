import { leafErrorBody } from './leaf-exception.filter';
import { AllocationLockTimeoutError } from '../../core/errors/allocation.error';
import { ForbiddenError } from '../../core/errors/forbidden.error';
import { InvalidArgumentError } from '../../core/errors/invalid-argument.error';
import { RateLimitedError } from '../../core/errors/rate-limited.error';
import { UnauthorizedError } from '../../core/errors/unauthorized.error';
import { LeafErrorCode } from '../../core/errors/leaf.error';
import { leafErrorFromBody } from '../../core/errors/leaf-error-from-body';
import { ModeDisabledError } from '../../core/errors/mode-disabled.error';
import { RemoteLeafError } from '../../core/errors/remote-leaf.error';
import { SegmentNotInitializedError } from '../../core/errors/segment-not-initialized.error';
import { SegmentNotReadyError } from '../../core/errors/segment-not-ready.error';
import { ShuttingDownError } from '../../core/errors/shutting-down.error';
import { SnowflakeNotReadyError } from '../../core/errors/snowflake-not-ready.error';
import { TagNotFoundError } from '../../core/errors/tag-not-found.error';
import { TimestampOverflowError } from '../../core/errors/timestamp-overflow.error';
import { OpaqueDisabledError, OpaqueKeyRetiredError } from '../../core/errors/opaque.error';
import {
  TimeBeforeEpochError,
  TimeBeyondLayoutError,
} from '../../core/errors/time-outside-layout.error';

const context = { mode: 'segment' as const, key: 'order' };

/** The client's side of the error contract: what LeafExceptionFilter sends, leafErrorFromBody rebuilds. */
describe('leafErrorFromBody', () => {
  it.each([
    new InvalidArgumentError('count must be an integer in 1..1000', 'count'),
    new TagNotFoundError('order'),
    new ModeDisabledError('segment'),
    new SegmentNotReadyError('order'),
    new SegmentNotInitializedError(),
    new AllocationLockTimeoutError('order'),
    new ShuttingDownError(),
    new UnauthorizedError('the bearer token is not valid'),
    new ForbiddenError('not this tag'),
    new OpaqueDisabledError('no key ring (option opaque.keys)'),
    new OpaqueKeyRetiredError(3),
  ])(
    'rebuilds the class, code, leafCode and message of $name from what the filter sent',
    (error) => {
      const body = leafErrorBody(error);
      const rebuilt = leafErrorFromBody(body.statusCode, JSON.stringify(body), context);
      expect(rebuilt).toBeInstanceOf(error.constructor);
      expect(rebuilt).toMatchObject({
        code: error.code,
        message: error.message,
        leafCode: error.leafCode,
      });
      // What the class carries beyond its message (an opaque refusal's reason and version).
      for (const field of ['reason', 'version'] as const) {
        if (field in error) expect(rebuilt).toHaveProperty(field, (error as never)[field]);
      }
    },
  );

  it.each([
    new TimeBeforeEpochError(-5, 1288834974657),
    new TimeBeyondLayoutError(3487858230209, 3487858230208),
  ])('rebuilds $name with its time and limit, 400', (error) => {
    const body = leafErrorBody(error);
    expect(body.statusCode).toBe(400);
    const rebuilt = leafErrorFromBody(400, JSON.stringify(body), { mode: 'snowflake', key: '' });
    expect(rebuilt).toBeInstanceOf(error.constructor);
    expect({ ...rebuilt }).toEqual({ ...error });
    expect(rebuilt).toMatchObject({ message: error.message });
  });

  it('rebuilds the snowflake not-ready error of a snowflake request', () => {
    const body = leafErrorBody(new SnowflakeNotReadyError());
    const rebuilt = leafErrorFromBody(503, JSON.stringify(body), { mode: 'snowflake', key: 'k' });
    expect(rebuilt).toBeInstanceOf(SnowflakeNotReadyError);
  });

  it('keeps the code of an error whose class needs more than the body, with Retry-After', () => {
    const body = leafErrorBody(new TimestampOverflowError(Date.now(), 0));
    const rebuilt = leafErrorFromBody(503, JSON.stringify(body), context, '3');
    expect(rebuilt).toBeInstanceOf(RemoteLeafError);
    expect(rebuilt).toMatchObject({
      code: LeafErrorCode.TIMESTAMP_OVERFLOW,
      statusCode: 503,
      retryAfterMs: 3000,
      message: body.message,
    });
  });

  it('rebuilds a quota refusal with its Retry-After (one second without one)', () => {
    const body = leafErrorBody(new RateLimitedError('over quota', 3000));
    expect(body.statusCode).toBe(429);
    const rebuilt = leafErrorFromBody(429, JSON.stringify(body), context, '3');
    expect(rebuilt).toBeInstanceOf(RateLimitedError);
    expect(rebuilt).toMatchObject({ code: LeafErrorCode.RATE_LIMITED, retryAfterMs: 3000 });
    expect(leafErrorFromBody(429, JSON.stringify(body), context)).toMatchObject({
      retryAfterMs: 1000,
    });
  });

  it.each([
    ['an HTML page', '<html>502 Bad Gateway</html>'],
    [
      'JSON without a Leaf code',
      '{"statusCode":500,"code":"LEAF_INTERNAL","message":"Internal error"}',
    ],
    [
      'a route Nest did not find',
      '{"statusCode":404,"code":"LEAF_HTTP_404","message":"Cannot GET /x"}',
    ],
    ['not an object', '"text"'],
  ])('is null for %s (the client treats the server as failed)', (_label, body) => {
    expect(leafErrorFromBody(502, body, context)).toBeNull();
  });
});
