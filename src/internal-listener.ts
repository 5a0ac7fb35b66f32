import { createServer, type Server } from 'node:https';
import type { IncomingMessage } from 'node:http';
import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { FastifyInstance } from 'fastify';
import type { InternalListenerConfig } from './config/app-config';

/** The paths of the routes only other instances call (sequence mode's forwarding and probe). */
export const INTERNAL_PATH_PREFIX = '/api/sequence/internal/';

/** Injection token of the listener's configuration (`AppConfig.internal`). */
export const INTERNAL_LISTENER_CONFIG = Symbol('INTERNAL_LISTENER_CONFIG');

/** Marks a request that came in through the internal listener. */
const THROUGH_INTERNAL = Symbol('leaf.throughInternalListener');

type MarkedRequest = IncomingMessage & { [THROUGH_INTERNAL]?: true };

/** What an unknown route answers (`LEAF_HTTP_<status>` of the exception filter). */
function notFoundBody(url: string) {
  const statusCode = 404;
  return { statusCode, code: `LEAF_HTTP_${statusCode}`, message: `Cannot GET ${url}` };
}

/**
 * With `LEAF_INTERNAL_PORT`, the internal routes are served on the internal listener only: on
 * the public port they answer 404 as if absent. Added to the application's Fastify instance
 * before it starts.
 */
export function keepInternalRoutesOffPublicPort(fastify: FastifyInstance): void {
  fastify.addHook('onRequest', (request, reply, done) => {
    if (
      request.url.startsWith(INTERNAL_PATH_PREFIX) &&
      (request.raw as MarkedRequest)[THROUGH_INTERNAL] !== true
    ) {
      // Answered here, as an unknown route is; the route itself never runs.
      void reply.code(404).send(notFoundBody(request.url));
      return;
    }
    done();
  });
}

/**
 * The internal listener (docs/security.md, "Peers"): HTTPS on `LEAF_INTERNAL_PORT` that
 * completes a connection only with a client certificate from `LEAF_INTERNAL_TLS_CA` (mutual
 * TLS), and passes the internal routes, nothing else, to the application's routes. Listens once
 * the application has started; closed at shutdown.
 */
@Injectable()
export class InternalListener implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('InternalListener');
  private server: Server | null = null;
  private ready: Promise<unknown> | null = null;

  constructor(
    @Inject(INTERNAL_LISTENER_CONFIG) private readonly config: InternalListenerConfig,
    private readonly adapterHost: HttpAdapterHost,
  ) {}

  /** @throws when the port cannot be bound (the start fails). */
  async onApplicationBootstrap(): Promise<void> {
    const fastify = this.adapterHost.httpAdapter.getInstance<FastifyInstance>();
    const server = createServer(
      { ...this.config.tls, requestCert: true, rejectUnauthorized: true },
      (request: MarkedRequest, response) => {
        const url = request.url ?? '';
        if (!url.startsWith(INTERNAL_PATH_PREFIX)) {
          response.statusCode = 404;
          response.setHeader('content-type', 'application/json; charset=utf-8');
          response.end(JSON.stringify(notFoundBody(url)));
          return;
        }
        request[THROUGH_INTERNAL] = true;
        // Routing needs the routes ready: the first request may come before the public listen.
        this.ready ??= new Promise<void>((resolve, reject) =>
          fastify.ready((error) => (error ? reject(error) : resolve())),
        );
        this.ready.then(
          () => fastify.routing(request, response),
          (error: unknown) => {
            this.logger.error(`The application is not ready: ${String(error)}`);
            response.destroy();
          },
        );
      },
    );
    server.keepAliveTimeout = 65_000;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.config.port, this.config.host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    this.server = server;
    this.logger.log(
      `Internal routes on https://${this.config.host}:${this.config.port} (mutual TLS)`,
    );
  }

  /** Stops listening and closes its connections. Never throws. */
  async onApplicationShutdown(): Promise<void> {
    const server = this.server;
    this.server = null;
    if (server === null) return;
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  }
}
