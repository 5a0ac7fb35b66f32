import { Histogram, Registry } from 'prom-client';
import { HttpDurationHistogram } from './http-duration-histogram';

const NAME = 'leaf_http_request_duration_seconds';
const HELP = 'HTTP requests: time to the response.';
const BOUNDS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

/** Observations: method, route, status, seconds (on, between and past the bounds). */
const OBSERVATIONS: [string, string, number, number][] = [
  ['GET', '/api/segment/get/:key', 200, 0.0001],
  ['GET', '/api/segment/get/:key', 200, 0.0005],
  ['GET', '/api/segment/get/:key', 200, 0.0031],
  ['GET', '/api/segment/get/:key', 404, 0.002],
  ['GET', '(unmatched)', 404, 0.7],
  ['POST', '/admin/tags', 201, 7.5],
  ['GET', '/api/segment/get/:key', 200, 5],
];

/** A registry with prom-client's own histogram fed `observations`. */
function promClient(observations = OBSERVATIONS): Registry {
  const registry = new Registry();
  const histogram = new Histogram({
    name: NAME,
    help: HELP,
    labelNames: ['method', 'route', 'status_code'],
    buckets: BOUNDS,
    registers: [registry],
  });
  for (const [method, route, status, seconds] of observations) {
    histogram.labels({ method, route, status_code: String(status) }).observe(seconds);
  }
  return registry;
}

/** A registry with {@link HttpDurationHistogram} fed `observations`. */
function ours(observations = OBSERVATIONS): {
  registry: Registry;
  histogram: HttpDurationHistogram;
} {
  const registry = new Registry();
  const histogram = new HttpDurationHistogram(NAME, HELP, BOUNDS).registerIn(registry);
  for (const [method, route, status, seconds] of observations) {
    histogram.series(method, route, status).observe(seconds);
  }
  return { registry, histogram };
}

describe('HttpDurationHistogram', () => {
  it("exposes exactly what prom-client's Histogram exposes for the same observations", async () => {
    expect(await ours().registry.metrics()).toBe(await promClient().metrics());
  });

  it('gives the same JSON as prom-client (getMetricsAsJSON)', async () => {
    expect(await ours().registry.getMetricsAsJSON()).toEqual(await promClient().getMetricsAsJSON());
  });

  it('hands out one series per label set and forgets them on reset', async () => {
    const { registry, histogram } = ours();
    expect(histogram.series('GET', '/api/segment/get/:key', 200)).toBe(
      histogram.series('GET', '/api/segment/get/:key', 200),
    );
    expect(histogram.series('GET', '/api/segment/get/:key', 200)).not.toBe(
      histogram.series('GET', '/api/segment/get/:key', 404),
    );
    registry.resetMetrics();
    expect(await registry.metrics()).toBe(await promClient([]).metrics());
    histogram.series('GET', '/health/live', 200).observe(0.001);
    expect(await registry.metrics()).toBe(
      await promClient([['GET', '/health/live', 200, 0.001]]).metrics(),
    );
  });
});
