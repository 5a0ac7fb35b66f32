/**
 * `GET /metrics` on the embedded defaults (SQLite, embedded snowflake worker): Prometheus
 * text that follows what the generators did.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { inject, startApp } from './support/app';

/** The value of the sample `name{labels}` in a scrape, or undefined. */
function sample(text: string, series: string): string | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line?.slice(series.length + 1);
}

describe('GET /metrics', () => {
  let dir: string;
  let app: NestFastifyApplication;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'leaf-metrics-'));
    app = await startApp({
      LEAF_DB_URL: `sqlite:${join(dir, 'leaf.sqlite')}`,
      LEAF_STATE_DIR: dir,
      LEAF_WORKER_ID: '9',
    });
  });

  afterAll(async () => {
    await app?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('reports segment buffers and the snowflake worker in Prometheus text', async () => {
    const before = await inject(app, '/metrics');
    expect(before.statusCode).toBe(200);
    expect(String(before.headers['content-type'])).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(sample(before.body, 'leaf_segment_loads_total{tag="leaf-segment-test"}')).toBe('0');
    expect(sample(before.body, 'leaf_snowflake_worker{worker_id="9",mode="embedded"}')).toBe('1');
    expect(sample(before.body, 'leaf_snowflake_ready')).toBe('1');

    await inject(app, '/api/segment/ids/leaf-segment-test?count=5');
    await inject(app, '/api/snowflake/ids/x?count=7');
    const after = (await inject(app, '/metrics')).body;
    expect(sample(after, 'leaf_segment_loads_total{tag="leaf-segment-test"}')).toBe('1');
    expect(sample(after, 'leaf_segment_step{tag="leaf-segment-test"}')).toBe('2000');
    expect(sample(after, 'leaf_segment_current_idle{tag="leaf-segment-test"}')).toBe('1995');
    expect(sample(after, 'leaf_segment_tags')).toBe('1');
    expect(Number(sample(after, 'leaf_snowflake_ids_total'))).toBeGreaterThanOrEqual(7);
    expect(Number(sample(after, 'leaf_snowflake_lease_reserved_until_ms'))).toBeGreaterThan(
      Date.now(),
    );
    expect(after).toContain('# TYPE leaf_segment_loads_total counter');
  });

  it('keeps the former hand-written names, now served by prom-client with process metrics', async () => {
    const text = (await inject(app, '/metrics')).body;
    expect(text).toContain('# TYPE leaf_snowflake_ids_total counter');
    expect(text).toContain('# TYPE leaf_segment_step gauge');
    expect(text).toMatch(/^process_cpu_user_seconds_total \d/m);
    expect(text).toMatch(/^nodejs_eventloop_lag_seconds \d/m);
  });
});
