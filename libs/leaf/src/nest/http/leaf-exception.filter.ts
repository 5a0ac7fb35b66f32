import {
  Catch,
  HttpException,
  HttpStatus,
  Logger,
  type ArgumentsHost,
  type ExceptionFilter,
} from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { LeafError, LeafErrorCode } from '../../core/errors/leaf.error';
import { publicMessage } from '../../core/errors/public-message';
import { redactSecrets } from '../../core/redact';

/** The JSON body of every error answer of {@link LeafExceptionFilter}. */
export interface LeafErrorBody {
  statusCode: number;
  /** `LEAF_...`: a {@link LeafErrorCode}, `LEAF_HTTP_<status>` or `LEAF_INTERNAL`. */
  code: string;
  message: string;
  /** The number the Java Leaf returned as an "ID" for the same condition, where it had one. */
  leafCode?: number;
}

/** A hidden cause is logged at most once per code in this long. */
const HIDDEN_LOG_INTERVAL_MS = 5000;

const STATUS_BY_CODE: Partial<Record<LeafErrorCode, HttpStatus>> = {
  [LeafErrorCode.INVALID_ARGUMENT]: HttpStatus.BAD_REQUEST,
  [LeafErrorCode.TAG_NOT_FOUND]: HttpStatus.NOT_FOUND,
  [LeafErrorCode.TAG_EXISTS]: HttpStatus.CONFLICT,
  [LeafErrorCode.UNAUTHORIZED]: HttpStatus.UNAUTHORIZED,
  [LeafErrorCode.FORBIDDEN]: HttpStatus.FORBIDDEN,
  [LeafErrorCode.RATE_LIMITED]: HttpStatus.TOO_MANY_REQUESTS,
  [LeafErrorCode.MODE_DISABLED]: HttpStatus.NOT_FOUND,
  [LeafErrorCode.CONFIGURATION]: HttpStatus.INTERNAL_SERVER_ERROR,
  [LeafErrorCode.NUMBER_FORMAT_NOT_FOUND]: HttpStatus.NOT_FOUND,
  [LeafErrorCode.NUMBER_FORMAT_EXISTS]: HttpStatus.CONFLICT,
  [LeafErrorCode.NUMBER_OVERFLOW]: HttpStatus.CONFLICT,
  [LeafErrorCode.TAG_RESERVED]: HttpStatus.CONFLICT,
  [LeafErrorCode.ID_ORIGIN_UNKNOWN]: HttpStatus.NOT_FOUND,
  [LeafErrorCode.GAPLESS_SERIES_NOT_FOUND]: HttpStatus.NOT_FOUND,
  [LeafErrorCode.GAPLESS_SERIES_EXISTS]: HttpStatus.CONFLICT,
  [LeafErrorCode.GAPLESS_NOT_RESERVED]: HttpStatus.NOT_FOUND,
  [LeafErrorCode.GAPLESS_KEY_MISMATCH]: HttpStatus.CONFLICT,
  [LeafErrorCode.GAPLESS_SETTLED]: HttpStatus.CONFLICT,
  [LeafErrorCode.GAPLESS_RESERVATION_EXPIRED]: HttpStatus.GONE,
  [LeafErrorCode.OPAQUE_DISABLED]: HttpStatus.NOT_FOUND,
  [LeafErrorCode.OPAQUE_KEY_RETIRED]: HttpStatus.GONE,
  [LeafErrorCode.TIME_BEFORE_EPOCH]: HttpStatus.BAD_REQUEST,
  [LeafErrorCode.TIME_BEYOND_LAYOUT]: HttpStatus.BAD_REQUEST,
};

/** HTTP status of a library error: client mistakes are 4xx, everything else "try later" (503). */
export function leafErrorStatus(error: LeafError): HttpStatus {
  return STATUS_BY_CODE[error.code] ?? HttpStatus.SERVICE_UNAVAILABLE;
}

/** The JSON body of a library error: `{statusCode, code, message, leafCode?}` ({@link publicMessage}). */
export function leafErrorBody(error: LeafError): LeafErrorBody {
  const body: LeafErrorBody = {
    statusCode: leafErrorStatus(error),
    code: error.code,
    // A credential in a message never reaches a caller, whatever quoted it.
    message: redactSecrets(publicMessage(error)),
  };
  if (error.leafCode !== undefined) body.leafCode = error.leafCode;
  return body;
}

/**
 * Turns every error of an HTTP request into a JSON answer, on Express and Fastify alike
 * (it writes through Nest's `HttpAdapterHost`):
 *
 * - a {@link LeafError}: its status ({@link leafErrorStatus}: 400 invalid argument or a time
 *   outside the snowflake layout, 401
 *   unauthorized, 403 forbidden, 404 unknown tag, number format, gapless series or reservation
 *   or disabled mode or opaque IDs, 409 tag, format or series exists, a business number
 *   outgrew its width or a gapless number is settled or held by another key, 410 a
 *   reservation expired or an opaque ID's key retired, 429 over a quota, 503 otherwise)
 *   and `{statusCode, code, message, leafCode?}`, with `Retry-After` (seconds, rounded up) on
 *   a 503 or 429 that carries `retryAfterMs`;
 * - a terminus health report (the `HttpException` of `@HealthCheck()`): passed through as is;
 * - any other `HttpException`: its status and `{statusCode, code: 'LEAF_HTTP_<status>', message}`;
 * - anything else: logged, and answered 500 `{code: 'LEAF_INTERNAL'}` without a stack trace.
 *
 * ```ts
 * providers: [{ provide: APP_FILTER, useClass: LeafExceptionFilter }]
 * // or: app.useGlobalFilters(new LeafExceptionFilter(app.get(HttpAdapterHost)))
 * ```
 */
@Catch()
export class LeafExceptionFilter implements ExceptionFilter {
  private readonly logger = new Logger(LeafExceptionFilter.name);
  /** Per code (a bounded set): when a hidden cause was last logged, and how many since. */
  private readonly hiddenLogged = new Map<string, { at: number; suppressed: number }>();

  constructor(private readonly adapterHost: HttpAdapterHost) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const adapter = this.adapterHost.httpAdapter;
    const response: unknown = host.switchToHttp().getResponse();
    let body: LeafErrorBody;
    if (exception instanceof LeafError) {
      body = leafErrorBody(exception);
      if (body.message !== exception.message) this.logHidden(exception);
      if (body.statusCode === HttpStatus.UNAUTHORIZED) {
        adapter.setHeader(response, 'www-authenticate', 'Bearer');
      }
      if (
        exception.retryAfterMs !== undefined &&
        (body.statusCode === HttpStatus.SERVICE_UNAVAILABLE ||
          body.statusCode === HttpStatus.TOO_MANY_REQUESTS)
      ) {
        const seconds = Math.max(1, Math.ceil(exception.retryAfterMs / 1000));
        adapter.setHeader(response, 'retry-after', String(seconds));
      }
    } else if (exception instanceof HttpException) {
      const statusCode = exception.getStatus();
      const report = exception.getResponse();
      if (
        typeof report === 'object' &&
        report !== null &&
        'status' in report &&
        'details' in report
      ) {
        // A terminus health report: its per-indicator details are the useful answer.
        this.send(response, statusCode, report);
        return;
      }
      body = {
        statusCode,
        code: `LEAF_HTTP_${statusCode}`,
        message: redactSecrets(exception.message),
      };
    } else {
      this.logger.error(
        redactSecrets(
          exception instanceof Error ? (exception.stack ?? exception.message) : String(exception),
        ),
      );
      body = { statusCode: 500, code: 'LEAF_INTERNAL', message: 'Internal error' };
    }
    this.send(response, body.statusCode, body);
  }

  /**
   * Logs what an answer left out (the message quoting a foreign cause), at most once per code
   * every {@link HIDDEN_LOG_INTERVAL_MS}: a database outage must not become a log line per
   * request.
   */
  private logHidden(error: LeafError): void {
    const now = Date.now();
    const last = this.hiddenLogged.get(error.code);
    if (last !== undefined && now - last.at < HIDDEN_LOG_INTERVAL_MS) {
      last.suppressed++;
      return;
    }
    const more = last?.suppressed ? ` (${last.suppressed} more like it not logged)` : '';
    this.hiddenLogged.set(error.code, { at: now, suppressed: 0 });
    const cause = error.cause instanceof Error ? `: ${error.cause.message}` : '';
    this.logger.warn(`Answered ${error.code}: ${error.message}${cause}${more}`);
  }

  private send(response: unknown, statusCode: number, body: object): void {
    const adapter = this.adapterHost.httpAdapter;
    // Both adapters answer an object as `application/json; charset=utf-8` unless a content
    // type is already set (a handler may have set text/plain before it failed): replace that.
    const current = (response as { getHeader?(name: string): unknown }).getHeader?.('content-type');
    if (current !== undefined && !String(current).startsWith('application/json')) {
      adapter.setHeader(response, 'content-type', 'application/json');
    }
    adapter.reply(response, body, statusCode);
  }
}
