import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import type { LogLevel } from '@nestjs/common';
import { readFileSync } from 'node:fs';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { LeafErrorCode } from 'nestjs-leaf';
import { Logger as PinoLogger } from 'nestjs-pino';
import { AppModule } from './app.module';
import {
  accessLog,
  createLogDestination,
  echoRequestId,
  requestId,
  type LogDestination,
} from './logging/logging.module';
import { METRICS_REGISTRY, observeHttpRequests } from './monitor/metrics.registry';
import { keepInternalRoutesOffPublicPort } from './internal-listener';
import { setupOpenApi } from './openapi';
import type { AppConfig } from './config/app-config';

/**
 * Answers a request Node's HTTP parser refused before Fastify saw it (headers past the size
 * limit, a malformed request line or a raw non-ASCII byte in the URL, a request timeout) in
 * the JSON error contract, then closes the connection: 431 / 408 `LEAF_HTTP_<status>`,
 * otherwise 400 `LEAF_INVALID_ARGUMENT`.
 */
export function clientErrorHandler(error: NodeJS.ErrnoException, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const [statusCode, reason, body] =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? [
          431,
          'Request Header Fields Too Large',
          { code: 'LEAF_HTTP_431', message: 'request headers too large' },
        ]
      : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? [408, 'Request Timeout', { code: 'LEAF_HTTP_408', message: 'request timed out' }]
        : [
            400,
            'Bad Request',
            { code: LeafErrorCode.INVALID_ARGUMENT, message: 'malformed HTTP request' },
          ];
  const payload = JSON.stringify({ statusCode, ...body });
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${statusCode} ${reason}\r\nContent-Type: application/json; charset=utf-8\r\n` +
        `X-Content-Type-Options: nosniff\r\n` +
        `Content-Length: ${Buffer.byteLength(payload)}\r\nConnection: close\r\n\r\n${payload}`,
    );
  }
  socket.destroy();
}

/**
 * `X-Content-Type-Options: nosniff` on every answer: a browser never reads an ID, an error
 * body or a monitoring page as anything but its declared type (docs/security.md, "In
 * production").
 */
export const NOSNIFF = ['x-content-type-options', 'nosniff'] as const;

/** Sets {@link NOSNIFF} on every answer Fastify sends (routes, errors, 404s). */
export function noSniff(fastify: FastifyInstance): void {
  fastify.addHook('onRequest', (_request, reply, done) => {
    void reply.header(NOSNIFF[0], NOSNIFF[1]);
    done();
  });
}

/**
 * Fastify settings for production: bounded bodies and requests, keep-alive, no trust in the
 * client; HTTPS with `tls` (PEM contents).
 */
export function createFastifyAdapter(tls?: { cert: Buffer; key: Buffer }): FastifyAdapter {
  return new FastifyAdapter({
    ...(tls === undefined ? {} : { https: tls }),
    bodyLimit: 16 * 1024,
    requestTimeout: 10_000,
    connectionTimeout: 10_000,
    keepAliveTimeout: 65_000,
    routerOptions: {
      maxParamLength: 1024,
      // `/api/segment/get/` must reach the empty-key handler (400), not fall through to 404.
      ignoreTrailingSlash: true,
    },
    return503OnClosing: true,
    clientErrorHandler,
    // Fastify answers HEAD with the GET handler by default: a HEAD on /api/segment/get would
    // consume an ID nobody receives. Only GET is served.
    exposeHeadRoutes: false,
    logger: false,
    // Request IDs: the caller's x-request-id when well-formed, else a UUID (logged and echoed
    // with the access log on; a caller's own always echoed).
    requestIdHeader: false,
    genReqId: requestId,
    // Fastify rejects some URLs before Nest sees them (a malformed %-escape, a parameter past
    // maxParamLength): answer those in the same JSON error contract as every other error.
    frameworkErrors: (error: FastifyError, _request: FastifyRequest, reply: FastifyReply) => {
      const body =
        error.code === 'FST_ERR_BAD_URL' || error.code === 'FST_ERR_MAX_PARAM_LENGTH'
          ? {
              statusCode: 400,
              code: LeafErrorCode.INVALID_ARGUMENT,
              message:
                error.code === 'FST_ERR_BAD_URL'
                  ? 'malformed URL (invalid percent-encoding)'
                  : 'key must be at most 128 characters',
            }
          : { statusCode: 500, code: 'LEAF_INTERNAL', message: 'Internal error' };
      void reply
        .status(body.statusCode)
        .header('content-type', 'application/json; charset=utf-8')
        .header(NOSNIFF[0], NOSNIFF[1])
        .send(body);
    },
  });
}

/**
 * Creates (but does not start listening) the application for `config`. Used by `main.ts`,
 * the e2e tests and the benchmarks alike.
 *
 * Logs: by default every log line (Nest's, the library's, the access log) is JSON on stdout
 * through pino (`LEAF_LOG_LEVEL`, `LEAF_ACCESS_LOG`), written to `options.logs` (batched
 * asynchronous writes, see {@link createLogDestination}; the caller flushes it before the
 * process ends, as `main.ts` does). With `options.logger` (tests) Nest's console logger at
 * those levels is used instead and pino is silent; request IDs are still assigned, and a
 * caller's `x-request-id` echoed.
 */
export async function createApp(
  config: AppConfig,
  options: { logger?: LogLevel[] | false; logs?: LogDestination } = {},
): Promise<NestFastifyApplication> {
  const logs = options.logger === undefined ? (options.logs ?? createLogDestination()) : null;
  const json = logs !== null;
  const app = await NestFactory.create<NestFastifyApplication>(
    json
      ? AppModule.forRoot(config, logs)
      : AppModule.forRoot({ ...config, log: { ...config.log, level: 'silent', accessLog: false } }),
    createFastifyAdapter(
      config.tls === null
        ? undefined
        : { cert: readFileSync(config.tls.certFile), key: readFileSync(config.tls.keyFile) },
    ),
    json
      ? { bufferLogs: true, abortOnError: false }
      : { logger: options.logger, abortOnError: false },
  );
  if (json) {
    app.useLogger(app.get(PinoLogger));
    // Stop buffering now: Nest would hold every line until start-up completes, and a refused
    // start would lose the lines that explain it.
    app.flushLogs();
  }
  // No enableShutdownHooks(): main.ts closes the app on SIGTERM/SIGINT itself, so that a
  // graceful stop ends with exit code 0 (Nest's hooks re-raise the signal); tests close it.
  const fastify = app.getHttpAdapter().getInstance();
  noSniff(fastify);
  const accessLogOn = json && config.log.accessLog;
  echoRequestId(fastify, accessLogOn);
  if (accessLogOn) accessLog(fastify, logs, config.log.level);
  observeHttpRequests(fastify, app.get(METRICS_REGISTRY));
  if (config.internal !== null) keepInternalRoutesOffPublicPort(fastify);
  setupOpenApi(app, config.clientTokens !== null);
  return app;
}
