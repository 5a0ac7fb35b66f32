import type { FastifyInstance } from 'fastify';
import { collectDefaultMetrics, Histogram, Registry } from 'prom-client';
import type { LeafMetricsCollector } from 'nestjs-leaf';

/** Injection token of the application's prom-client {@link Registry} (one per app instance). */
export const METRICS_REGISTRY = Symbol('METRICS_REGISTRY');

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
  new Histogram({
    name: 'leaf_http_request_duration_seconds',
    help: 'HTTP requests: time to the response, per method, route template and status code.',
    labelNames: ['method', 'route', 'status_code'],
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [registry],
  });
  return registry;
}

/**
 * Feeds `leaf_http_request_duration_seconds` from Fastify's `onResponse` hook, labelled
 * with the route template (`/api/segment/get/:key`), never the raw URL, so the label set
 * stays bounded whatever clients send.
 */
export function observeHttpRequests(fastify: FastifyInstance, registry: Registry): void {
  const histogram = registry.getSingleMetric('leaf_http_request_duration_seconds') as
    Histogram<'method' | 'route' | 'status_code'> | undefined;
  if (!histogram) return;
  // One labelled child per (method, route, status), looked up by a string key: resolving the
  // label set on every observation costs more than the ID route itself.
  const children = new Map<string, { observe(value: number): void }>();
  fastify.addHook('onResponse', (request, reply, done) => {
    const route = request.routeOptions.url ?? UNMATCHED_ROUTE;
    const key = `${request.method} ${reply.statusCode} ${route}`;
    let child = children.get(key);
    if (child === undefined) {
      child = histogram.labels({
        method: request.method,
        route,
        status_code: String(reply.statusCode),
      });
      children.set(key, child);
    }
    child.observe(reply.elapsedTime / 1000);
    done();
  });
}
