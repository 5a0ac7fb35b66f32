import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { FastifyInstance } from 'fastify';
import { LoggerModule } from 'nestjs-pino';
import type { DynamicModule } from '@nestjs/common';
import { destination, stdTimeFunctions } from 'pino';
import type { AppConfig } from '../config/app-config';

/** Header carrying the request ID, read from the request and echoed in the response. */
export const REQUEST_ID_HEADER = 'x-request-id';

/** A caller's request ID is taken as is when it looks like one; anything else is replaced. */
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * The request's ID (Fastify's `genReqId`, so `request.id` and pino-http's `reqId` agree): the
 * caller's `x-request-id` when well-formed, else a fresh UUID. {@link echoRequestId} returns it.
 */
export function requestId(req: IncomingMessage): string {
  const given = req.headers[REQUEST_ID_HEADER];
  return typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
}

/** Echoes the request ID in every response's `x-request-id` header. */
export function echoRequestId(fastify: FastifyInstance): void {
  fastify.addHook('onRequest', (request, reply, done) => {
    void reply.header(REQUEST_ID_HEADER, request.id);
    done();
  });
}

/**
 * Structured JSON logs on stdout through pino (nestjs-pino): Nest's `Logger` calls of the
 * library and the app become JSON lines (`level`, `time`, `context`, `msg`), and each request
 * gets an ID and, unless `LEAF_ACCESS_LOG=false`, one access-log line when it completes (no
 * other per-request line: the ID hot path logs nothing). Request lines carry the method, URL,
 * status and response time, never headers (the admin route's bearer token).
 */
export function loggingModule(config: AppConfig): DynamicModule {
  return LoggerModule.forRoot({
    pinoHttp: [
      {
        level: config.log.level,
        timestamp: stdTimeFunctions.isoTime,
        formatters: { level: (label) => ({ level: label }) },
        autoLogging: config.log.accessLog,
        quietReqLogger: true,
        customLogLevel: (_req, res, error) =>
          error !== undefined || res.statusCode >= 500 ? 'warn' : 'info',
        customSuccessMessage: (req, res, responseTime) =>
          `${req.method} ${req.url} ${res.statusCode} ${Math.round(responseTime * 10) / 10} ms`,
        customErrorMessage: (req, res) => `${req.method} ${req.url} ${res.statusCode} failed`,
        serializers: {
          req: (req: { id: unknown; method: string; url: string }) => ({
            id: req.id,
            method: req.method,
            url: req.url,
          }),
          res: (res: { statusCode: number }) => ({ statusCode: res.statusCode }),
        },
      },
      // Synchronous writes: a refusal to start exits at once (process.exit) and must not lose
      // the lines before it; one short line per request is cheap on a pipe or a file.
      destination({ dest: 1, sync: true }),
    ],
  });
}
