import type { Metric } from 'prom-client';

/** Label names of {@link HttpDurationHistogram}, in exposition order. */
type HttpLabels = { method: string; route: string; status_code: string };

/** One label set's observations: a count per bucket (not cumulative), their sum and count. */
export class HttpDurationSeries {
  readonly buckets: number[];
  sum = 0;
  count = 0;

  constructor(
    readonly labels: Readonly<HttpLabels>,
    private readonly bounds: readonly number[],
  ) {
    this.buckets = new Array<number>(bounds.length).fill(0);
  }

  /** Adds one observation, in seconds. */
  observe(seconds: number): void {
    const bounds = this.bounds;
    for (let i = 0; i < bounds.length; i++) {
      if (seconds <= bounds[i]) {
        this.buckets[i]++;
        break;
      }
    }
    this.sum += seconds;
    this.count++;
  }
}

/** A value of prom-client's exposition: one line of the text format. */
interface ExposedValue {
  readonly value: number;
  readonly labels: Record<string, string | number>;
  readonly metricName: string;
  readonly sharedLabels?: Readonly<HttpLabels>;
  /** prom-client gives every bucket an exemplar, `null` without exemplars. */
  readonly exemplar?: null;
}

/**
 * The HTTP request-duration histogram, `leaf_http_request_duration_seconds{method, route,
 * status_code}`: what prom-client's `Histogram` exposes, kept in plain numbers. Observing
 * through a prom-client child validates and hashes the labels and looks the bucket up by a
 * number-to-string key on every request, 1.6–2.4 µs: the largest single part of what the
 * application added to a bare Nest + Fastify route (docs/records/benchmarks-journal.md,
 * *Where the time goes*). Here a request is a bounds scan and three additions on a series found by three
 * map look-ups. It is registered in the app's prom-client registry as a metric of its
 * own (`get`, `getForPromString` and `reset`, the part of a metric a `Registry` uses) and
 * produces the same exposition as prom-client's histogram (http-duration-histogram.spec.ts
 * compares the two).
 */
export class HttpDurationHistogram {
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  /** Every series, in the order they were created (the exposition's order). */
  private all: HttpDurationSeries[] = [];
  private byRoute = new Map<string, Map<string, Map<number, HttpDurationSeries>>>();

  constructor(
    readonly name: string,
    readonly help: string,
    readonly bounds: readonly number[],
  ) {}

  /**
   * The series of one label set, created on first use. Looked up per request: by the route
   * template and the method (strings the router and Node's parser hand out as the same
   * objects every time, so their hashes are cached) and the status code, never a string
   * built per request.
   */
  series(method: string, route: string, statusCode: number): HttpDurationSeries {
    let byMethod = this.byRoute.get(route);
    if (byMethod === undefined) this.byRoute.set(route, (byMethod = new Map()));
    let byStatus = byMethod.get(method);
    if (byStatus === undefined) byMethod.set(method, (byStatus = new Map()));
    let series = byStatus.get(statusCode);
    if (series === undefined) {
      series = new HttpDurationSeries(
        { method, route, status_code: String(statusCode) },
        this.bounds,
      );
      byStatus.set(statusCode, series);
      this.all.push(series);
    }
    return series;
  }

  /** prom-client's `Registry` reads this for the text exposition. */
  async getForPromString(): Promise<{
    name: string;
    help: string;
    type: 'histogram';
    aggregator: 'sum';
    values: ExposedValue[];
  }> {
    const values: ExposedValue[] = [];
    for (const series of this.all) {
      let cumulative = 0;
      this.bounds.forEach((bound, i) => {
        cumulative += series.buckets[i];
        values.push({
          labels: { le: bound },
          value: cumulative,
          metricName: `${this.name}_bucket`,
          exemplar: null,
          sharedLabels: series.labels,
        });
      });
      const labels = series.labels;
      values.push(
        {
          labels: { le: '+Inf' },
          value: series.count,
          metricName: `${this.name}_bucket`,
          exemplar: null,
          sharedLabels: labels,
        },
        { labels: {}, value: series.sum, metricName: `${this.name}_sum`, sharedLabels: labels },
        { labels: {}, value: series.count, metricName: `${this.name}_count`, sharedLabels: labels },
      );
    }
    return {
      name: this.name,
      help: this.help,
      type: this.type,
      aggregator: this.aggregator,
      values,
    };
  }

  /** `getMetricsAsJSON()`: the labels of each value merged, as prom-client's histogram does. */
  async get(): Promise<{
    name: string;
    help: string;
    type: 'histogram';
    aggregator: 'sum';
    values: Omit<ExposedValue, 'sharedLabels'>[];
  }> {
    const data = await this.getForPromString();
    return {
      ...data,
      values: data.values.map(({ sharedLabels, ...value }) => ({
        ...value,
        labels: { ...value.labels, ...sharedLabels },
      })),
    };
  }

  /** Forgets every series (`Registry.resetMetrics()`). */
  reset(): void {
    this.all = [];
    this.byRoute = new Map();
  }

  /** Registers it in `registry` (prom-client's types name only its own metric classes). */
  registerIn(registry: { registerMetric(metric: Metric): void }): this {
    registry.registerMetric(this as unknown as Metric);
    return this;
  }
}
