import type { FastifyInstance, FastifyRequest, onRequestHookHandler } from 'fastify';
import { bearerToken } from '../admin/admin-token';
import type { ClientAccess } from './client-access';
import { CLIENT_ROUTE_CONFIG, type ClientRouteScope } from './client-route.decorator';

/** The IDs a request costs: 1, its `count` (when well-formed; the route refuses it otherwise), or 0. */
function costOf(cost: ClientRouteScope['cost'], request: FastifyRequest): number {
  if (cost === 'none') return 0;
  if (cost === 'one') return 1;
  const raw = (request.query as Record<string, unknown> | undefined)?.count;
  // A malformed count costs nothing here: the route answers 400 before it allocates.
  return typeof raw === 'string' && /^\d{1,9}$/.test(raw) ? Number(raw) : 0;
}

/** The check of one client route, its scope read once when the route was registered. */
function clientCheck(scope: ClientRouteScope, access: ClientAccess): onRequestHookHandler {
  const { mode, tagParam, cost } = scope;
  return (request, _reply, done) => {
    try {
      const tag =
        tagParam === null
          ? null
          : ((request.params as Record<string, string | undefined>)[tagParam] ?? null);
      access.admit(bearerToken(request.headers.authorization), mode, tag, costOf(cost, request));
    } catch (error) {
      // Fastify hands it to Nest's error handler: the exception filter answers as for a route.
      done(error as Error);
      return;
    }
    done();
  };
}

/**
 * The client-token check (docs/security.md, "Callers"), installed only when
 * `LEAF_CLIENT_TOKENS` (or its file) is set. Every route marked `@ClientRoute` gets its own
 * Fastify `onRequest` hook, built from the scope when the route is registered: it needs
 * `Authorization: Bearer <token>` of a client allowed the route's mode and tag, and within its
 * quota. Other routes (health, metrics, admin, the peers' internal routes) get none, and pay
 * nothing. It runs before Nest's handler (where a guard would run), so a refused request
 * allocates nothing; its error goes through the application's exception filter.
 *
 * A hook, not a Nest guard: the guard step (an execution context, the route's metadata read
 * per request and an extra `await`) cost as much as the check itself on the single-ID route
 * (docs/benchmarks.md, *Client tokens*). Must be installed before the routes are registered
 * (`AppModule` does it from a provider, built before `app.init()`).
 */
export function installClientTokenCheck(fastify: FastifyInstance, access: ClientAccess): void {
  // Fail closed: on another HTTP adapter the routes would be open.
  if (typeof (fastify as Partial<FastifyInstance> | undefined)?.addHook !== 'function') {
    throw new Error('LEAF_CLIENT_TOKENS needs the application on Fastify (createApp)');
  }
  fastify.addHook('onRoute', (route) => {
    const scope = (route.config as Record<string, unknown> | undefined)?.[CLIENT_ROUTE_CONFIG] as
      ClientRouteScope | undefined;
    if (scope === undefined) return;
    const own = route.onRequest;
    // A new array, never a push (see observeHttpRequests): Fastify may share the options.
    route.onRequest = [
      ...(own === undefined ? [] : Array.isArray(own) ? own : [own]),
      clientCheck(scope, access),
    ];
  });
}
