import {
  Catch,
  HttpException,
  HttpStatus,
  Logger,
  type ArgumentsHost,
  type ExceptionFilter,
} from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { LeafError, LeafErrorCode } from '@app/leaf';

/** The JSON body of every error answer. */
export interface ErrorBody {
  statusCode: number;
  code: string;
  message: string;
  leafCode?: number;
}

const STATUS_BY_CODE: Partial<Record<LeafErrorCode, HttpStatus>> = {
  [LeafErrorCode.INVALID_ARGUMENT]: HttpStatus.BAD_REQUEST,
  [LeafErrorCode.TAG_NOT_FOUND]: HttpStatus.NOT_FOUND,
  [LeafErrorCode.MODE_DISABLED]: HttpStatus.NOT_FOUND,
  [LeafErrorCode.CONFIGURATION]: HttpStatus.INTERNAL_SERVER_ERROR,
};

/** HTTP status of a library error: client mistakes are 4xx, everything else "try later" (503). */
export function statusOf(error: LeafError): HttpStatus {
  return STATUS_BY_CODE[error.code] ?? HttpStatus.SERVICE_UNAVAILABLE;
}

/**
 * The one place where errors become HTTP answers: `{statusCode, code, message, leafCode}`.
 * Never an ID, never a stack trace; unexpected errors are logged and answered as 500.
 */
@Catch()
export class LeafExceptionFilter implements ExceptionFilter {
  private readonly logger = new Logger(LeafExceptionFilter.name);

  catch(exception: unknown, host: ArgumentsHost): void {
    const reply = host.switchToHttp().getResponse<FastifyReply>();
    let body: ErrorBody;
    if (exception instanceof LeafError) {
      body = { statusCode: statusOf(exception), code: exception.code, message: exception.message };
      if (exception.leafCode !== undefined) body.leafCode = exception.leafCode;
      if (
        exception.retryAfterMs !== undefined &&
        body.statusCode === HttpStatus.SERVICE_UNAVAILABLE
      ) {
        void reply.header(
          'retry-after',
          String(Math.max(1, Math.ceil(exception.retryAfterMs / 1000))),
        );
      }
    } else if (exception instanceof HttpException) {
      const statusCode = exception.getStatus();
      const response = exception.getResponse();
      if (
        typeof response === 'object' &&
        response !== null &&
        'status' in response &&
        'details' in response
      ) {
        // A terminus health report: its per-indicator details are the useful answer.
        void reply.status(statusCode).send(response);
        return;
      }
      body = { statusCode, code: `LEAF_HTTP_${statusCode}`, message: exception.message };
    } else {
      this.logger.error(
        exception instanceof Error ? (exception.stack ?? exception.message) : String(exception),
      );
      body = { statusCode: 500, code: 'LEAF_INTERNAL', message: 'Internal error' };
    }
    void reply
      .status(body.statusCode)
      .header('content-type', 'application/json; charset=utf-8')
      .send(body);
  }
}
