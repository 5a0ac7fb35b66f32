import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { FastifyInstance } from 'fastify';
import { LoggerModule, PinoLogger } from 'nestjs-pino';
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
    // No per-request middleware: pino-http and its AsyncLocalStorage context per request
    // (through Fastify's Express-middleware layer) tripled the cost of an ID request. The
    // access log is one Fastify hook instead ({@link accessLog}); pino here only sets up the
    // root logger that Nest's Logger calls go through.
    forRoutes: [],
    pinoHttp: [
      {
        level: config.log.level,
        timestamp: stdTimeFunctions.isoTime,
        formatters: { level: (label) => ({ level: label }) },
      },
      // Synchronous writes: a refusal to start exits at once (process.exit) and must not lose
      // the lines before it; one short line per request is cheap on a pipe or a file.
      destination({ dest: 1, sync: true }),
    ],
  });
}

/**
 * The access log: one line per request when it completes, `{reqId, req: {method, url},
 * res: {statusCode}, responseTime}` — never headers (the admin route's bearer token). A
 * Fastify `onResponse` hook on the root pino logger: nothing runs per request when it is off.
 */
export function accessLog(fastify: FastifyInstance): void {
  // pino-http's root logger serializes `req`/`res` as raw Node objects; these fields are
  // already plain, so the access logger keeps them as written.
  let logger: typeof PinoLogger.root | null = null;
  fastify.addHook('onResponse', (request, reply, done) => {
    logger ??= PinoLogger.root.child(
      {},
      { serializers: { req: (req: unknown) => req, res: (res: unknown) => res } },
    );
    const responseTime = Math.round(reply.elapsedTime * 10) / 10;
    const line = {
      reqId: request.id,
      req: { method: request.method, url: request.url },
      res: { statusCode: reply.statusCode },
      responseTime,
    };
    const msg = `${request.method} ${request.url} ${reply.statusCode} ${responseTime} ms`;
    if (reply.statusCode >= 500) logger.warn(line, msg);
    else logger.info(line, msg);
    done();
  });
}
