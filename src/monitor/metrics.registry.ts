import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { collectDefaultMetrics, Registry } from 'prom-client';
import type { LeafMetricsCollector } from 'nestjs-leaf';
import { HttpDurationHistogram } from './http-duration-histogram';

/** Injection token of the application's prom-client {@link Registry} (one per app instance). */
export const METRICS_REGISTRY = Symbol('METRICS_REGISTRY');

/** Name of the HTTP request-duration histogram. */
export const HTTP_DURATION_METRIC = 'leaf_http_request_duration_seconds';

/** Route label of requests no route matched (a bounded label, never the raw URL). */
export const UNMATCHED_ROUTE = '(unmatched)';

/**
 * The application's registry: prom-client's default process metrics (CPU, memory, heap,
 * GC, handles, event-loop lag), Leaf's collector, and the HTTP request-duration histogram
 * (see {@link observeHttpRequests}). Its own registry, not prom-client's global one, so that
 * several apps in one process (the tests) do not collide.
 */
export function createMetricsRegistry(collector: LeafMetricsCollector): Registry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: 10 });
  collector.register(registry);
  new HttpDurationHistogram(
    HTTP_DURATION_METRIC,
    'HTTP requests: time to the response, per method, route template and status code.',
    [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
  ).registerIn(registry);
  return registry;
}

/**
 * Feeds `leaf_http_request_duration_seconds` from Fastify's `onResponse` hooks, labelled
 * with the route template (`/api/segment/get/:key`), never the raw URL, so the label set
 * stays bounded whatever clients send. Each route gets a hook of its own, closed over its
 * template (an `onRoute` hook adds it as the route is registered): reading
 * `request.routeOptions.url` per request builds a new twelve-field object each time
 * (docs/benchmarks.md, *Where the application's cost is*). Requests no route matched go to
 * Fastify's not-found handler, which runs only the instance's hooks: one instance hook
 * observes those, under {@link UNMATCHED_ROUTE}. Must run before the routes are registered
 * (before `app.init()`), as `createApp` calls it.
 */
export function observeHttpRequests(fastify: FastifyInstance, registry: Registry): void {
  const histogram = registry.getSingleMetric(HTTP_DURATION_METRIC) as unknown;
  if (!(histogram instanceof HttpDurationHistogram)) return;
  const observe = (route: string, request: FastifyRequest, reply: FastifyReply): void =>
    histogram.series(request.method, route, reply.statusCode).observe(reply.elapsedTime / 1000);
  fastify.addHook('onRoute', (route) => {
    const template = route.url;
    const own = route.onResponse;
    // A new array, never a push: Fastify copies a GET route's options for its HEAD route
    // before this hook runs, and the HEAD route gets a hook of its own.
    route.onResponse = [
      ...(own === undefined ? [] : Array.isArray(own) ? own : [own]),
      (request, reply, done) => {
        observe(template, request, reply);
        done();
      },
    ];
  });
  fastify.addHook('onResponse', (request, reply, done) => {
    if (request.is404) observe(UNMATCHED_ROUTE, request, reply);
    done();
  });
}
