import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import type { LogLevel } from '@nestjs/common';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { LeafErrorCode } from 'nestjs-leaf';
import { AppModule } from './app.module';
import type { AppConfig } from './config/app-config';

/** Fastify settings for production: bounded bodies and requests, keep-alive, no trust in the client. */
export function createFastifyAdapter(): FastifyAdapter {
  return new FastifyAdapter({
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
    // Fastify answers HEAD with the GET handler by default: a HEAD on /api/segment/get would
    // consume an ID nobody receives. Only GET is served.
    exposeHeadRoutes: false,
    logger: false,
    // Fastify rejects some URLs before Nest sees them (a malformed %-escape, a parameter past
    // maxParamLength): answer those in the same JSON error contract as every other error.
    frameworkErrors: (error: FastifyError, _request: FastifyRequest, reply: FastifyReply) => {
      const body =
        error.code === 'FST_ERR_BAD_URL'
          ? {
              statusCode: 400,
              code: LeafErrorCode.INVALID_ARGUMENT,
              message: 'malformed URL (invalid percent-encoding)',
            }
          : error.code === 'FST_ERR_MAX_PARAM_LENGTH'
            ? {
                statusCode: 400,
                code: LeafErrorCode.INVALID_ARGUMENT,
                message: 'key must be at most 128 characters',
              }
            : { statusCode: 500, code: 'LEAF_INTERNAL', message: 'Internal error' };
      void reply
        .status(body.statusCode)
        .header('content-type', 'application/json; charset=utf-8')
        .send(body);
    },
  });
}

/**
 * Creates (but does not start listening) the application for `config`. Used by `main.ts`,
 * the e2e tests and the benchmarks alike.
 */
export async function createApp(
  config: AppConfig,
  options: { logger?: LogLevel[] | false } = {},
): Promise<NestFastifyApplication> {
  const app = await NestFactory.create<NestFastifyApplication>(
    AppModule.forRoot(config),
    createFastifyAdapter(),
    {
      logger: options.logger ?? ['log', 'warn', 'error'],
      abortOnError: false,
    },
  );
  app.enableShutdownHooks();
  return app;
}
