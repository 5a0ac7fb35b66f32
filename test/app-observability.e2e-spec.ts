/**
 * Observability of the application on the embedded defaults (SQLite, embedded worker):
 * `/metrics` through prom-client (process metrics, Leaf's collector, the histograms, HTTP
 * durations per route template), JSON logs with request IDs from a real process (and the
 * access log switched off), and the OpenAPI document at `/docs` and `/docs-json`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { inject, startApp } from './support/app';
import { AppProcess, killAllAppProcesses } from './support/app-process';

/** The value of the sample `series` (name and labels as printed) in a scrape. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

/** The JSON lines of a process's stdout (every line must be JSON). */
function jsonLines(stdout: string): Array<Record<string, unknown>> {
  return stdout
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

describe('observability (in process)', () => {
  let dir: string;
  let app: NestFastifyApplication;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'leaf-obs-'));
    app = await startApp({
      LEAF_DB_URL: `sqlite:${join(dir, 'leaf.sqlite')}`,
      LEAF_STATE_DIR: dir,
      LEAF_WORKER_ID: '11',
    });
  });

  afterAll(async () => {
    await app?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('serves process metrics, the Leaf series and the histograms after traffic', async () => {
    for (let i = 0; i < 3; i++) await inject(app, '/api/segment/get/leaf-segment-test');
    await inject(app, '/api/snowflake/ids/x?count=4');
    await inject(app, '/api/segment/get/no-such-tag');
    await inject(app, '/api/segment/get/leaf-segment-test', { method: 'HEAD' });
    await inject(app, '/no/such/route');
    await inject(app, '/no/such/route');
    const answer = await inject(app, '/metrics');
    expect(answer.statusCode).toBe(200);
    expect(String(answer.headers['content-type'])).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = answer.body;
    // prom-client's default process metrics, event-loop lag included
    expect(text).toMatch(/^process_resident_memory_bytes \d/m);
    expect(text).toMatch(/^nodejs_eventloop_lag_seconds \d/m);
    expect(text).toMatch(/^nodejs_heap_size_used_bytes \d/m);
    // the Leaf collector: IDs per mode and tag, from the buffers' counters
    expect(sample(text, 'leaf_ids_issued_total{mode="segment",tag="leaf-segment-test"}')).toBe(3);
    expect(sample(text, 'leaf_ids_issued_total{mode="snowflake",tag=""}')).toBeGreaterThanOrEqual(
      4,
    );
    expect(sample(text, 'leaf_snowflake_worker{worker_id="11",mode="embedded"}')).toBe(1);
    expect(sample(text, 'leaf_not_ready_total{mode="segment"}')).toBe(0);
    expect(sample(text, 'leaf_clock_backwards_total{outcome="refused"}')).toBe(0);
    // an unknown tag never becomes a label
    expect(text).not.toContain('no-such-tag');
    // histograms: the range load, the lease extensions (at start and by the heartbeat)
    expect(
      sample(
        text,
        'leaf_segment_load_duration_seconds_count{tag="leaf-segment-test",outcome="ok"}',
      ),
    ).toBe(1);
    expect(
      sample(text, 'leaf_snowflake_lease_extension_duration_seconds_count{outcome="ok"}'),
    ).toBeGreaterThanOrEqual(1);
    expect(text).toContain('# TYPE leaf_segment_load_duration_seconds histogram');
    // HTTP durations labelled with the route template, never the raw URL
    expect(
      sample(
        text,
        'leaf_http_request_duration_seconds_count{method="GET",route="/api/segment/get/:key",status_code="200"}',
      ),
    ).toBe(3);
    expect(
      sample(
        text,
        'leaf_http_request_duration_seconds_count{method="GET",route="/api/segment/get/:key",status_code="404"}',
      ),
    ).toBe(1);
    // each request observed once; unmatched URLs (HEAD too: no HEAD routes) under one label
    expect(
      sample(
        text,
        'leaf_http_request_duration_seconds_count{method="HEAD",route="(unmatched)",status_code="404"}',
      ),
    ).toBe(1);
    expect(
      sample(
        text,
        'leaf_http_request_duration_seconds_count{method="GET",route="(unmatched)",status_code="404"}',
      ),
    ).toBe(2);
    expect(text).not.toContain('/no/such/route');
    expect(text).toContain('route="/api/snowflake/ids/:key"');
    expect(text).not.toContain('route="/api/segment/get/leaf-segment-test"');
  });

  it('echoes a well-formed x-request-id, replaces a malformed one, sends none unasked with the access log off', async () => {
    const given = await inject(app, '/health/live', { headers: { 'x-request-id': 'trace-42' } });
    expect(given.headers['x-request-id']).toBe('trace-42');
    const bad = await inject(app, '/health/live', { headers: { 'x-request-id': 'a b\nc' } });
    expect(bad.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    const onError = await inject(app, '/api/segment/get/no-such-tag', {
      headers: { 'x-request-id': 'trace-43' },
    });
    expect(onError.statusCode).toBe(404);
    expect(onError.headers['x-request-id']).toBe('trace-43');
    // The UUID such a request gets is logged nowhere while the access log is off.
    const none = await inject(app, '/api/segment/get/leaf-segment-test');
    expect(none.statusCode).toBe(200);
    expect(none.headers['x-request-id']).toBeUndefined();
  });

  it('describes every route in the OpenAPI document, IDs as decimal strings', async () => {
    const answer = await inject(app, '/docs-json');
    expect(answer.statusCode).toBe(200);
    const doc = JSON.parse(answer.body) as {
      paths: Record<string, Record<string, { responses: Record<string, unknown> }>>;
      components: { schemas: Record<string, { properties?: Record<string, unknown> }> };
    };
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining([
        '/api/segment/get/{key}',
        '/api/segment/ids/{key}',
        '/api/segment/range/{key}',
        '/api/snowflake/get/{key}',
        '/api/snowflake/ids/{key}',
        '/decodeSnowflakeId',
        '/health/live',
        '/health/ready',
        '/health/ready/segment',
        '/health/ready/snowflake',
        '/metrics',
        '/cache',
        '/db',
      ]),
    );
    expect(doc.components.schemas.LeafError.properties).toHaveProperty('code');
    const get = doc.paths['/api/segment/get/{key}'].get;
    expect(get.responses['404']).toBeDefined();
    expect(get.responses['503']).toBeDefined();
    expect(JSON.stringify(get.responses['200'])).toContain('"pattern":"^[0-9]+$"');
    const ids = doc.paths['/api/snowflake/ids/{key}'].get;
    expect(JSON.stringify(ids.responses['200'])).toContain('"pattern":"^[0-9]+$"');
    // Every operation documents the error body, at least as its default answer.
    for (const item of Object.values(doc.paths)) {
      for (const op of Object.values(item)) expect(op.responses.default).toBeDefined();
    }
    const ui = await inject(app, '/docs');
    expect(ui.statusCode).toBe(200);
    expect(ui.body).toContain('/docs-json');
    expect((await inject(app, '/docs/swagger-ui-bundle.js')).statusCode).toBe(200);
    expect((await inject(app, '/docs/..%2Fpackage.json')).statusCode).toBe(404);
  });
});

describe('JSON logs (a real process)', () => {
  const dirs: string[] = [];
  afterAll(async () => {
    await killAllAppProcesses();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  /**
   * Starts the built app with `env`, asks for one ID with an `x-request-id` and one without,
   * stops it: its JSON lines and the `x-request-id` the second answer carried (null: none).
   */
  async function run(
    env: Record<string, string>,
  ): Promise<{ lines: Array<Record<string, unknown>>; unasked: string | null }> {
    const dir = mkdtempSync(join(tmpdir(), 'leaf-logs-'));
    dirs.push(dir);
    const proc = AppProcess.spawn({
      PORT: '0',
      HOST: '127.0.0.1',
      LEAF_DB_URL: `sqlite:${join(dir, 'leaf.sqlite')}`,
      LEAF_STATE_DIR: dir,
      LEAF_WORKER_ID: '12',
      ...env,
    });
    const port = await proc.listening();
    const res = await fetch(`http://127.0.0.1:${port}/api/segment/get/leaf-segment-test`, {
      headers: { 'x-request-id': 'req-from-test' },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-request-id')).toBe('req-from-test');
    await res.text();
    const plain = await fetch(`http://127.0.0.1:${port}/api/segment/get/leaf-segment-test`);
    expect(plain.status).toBe(200);
    await plain.text();
    const exit = await proc.stop('SIGTERM');
    expect(exit.stderr).not.toMatch(/ZOO_/);
    return { lines: jsonLines(exit.stdout), unasked: plain.headers.get('x-request-id') };
  }

  it('LEAF_ACCESS_LOG=true: one JSON object per line, with an access log carrying the request ID', async () => {
    const { lines, unasked } = await run({ LEAF_ACCESS_LOG: 'true' });
    const listening = lines.find((l) => String(l.msg).startsWith('Leaf listening on http://'));
    expect(listening).toMatchObject({ level: 'info', context: 'Bootstrap' });
    expect(typeof listening?.time).toBe('string');
    const access = lines.filter((l) => l.req !== undefined);
    expect(access).toHaveLength(2);
    expect(access[0]).toMatchObject({
      reqId: 'req-from-test',
      req: { method: 'GET', url: '/api/segment/get/leaf-segment-test' },
      res: { statusCode: 200 },
    });
    // A request that sent no ID gets a UUID, echoed because the access log carries it.
    expect(unasked).toMatch(/^[0-9a-f-]{36}$/);
    expect(access[1]).toMatchObject({ reqId: unasked, res: { statusCode: 200 } });
    // No headers in the log (the admin token travels in one).
    expect(JSON.stringify(access[0])).not.toContain('headers');
  });

  it('by default (and with LEAF_ACCESS_LOG=false) there is no access log', async () => {
    const explicit = await run({ LEAF_ACCESS_LOG: 'false' });
    expect(explicit.lines.filter((l) => l.req !== undefined)).toHaveLength(0);
    const quiet = await run({});
    expect(quiet.lines.filter((l) => l.req !== undefined)).toHaveLength(0);
    expect(quiet.lines.some((l) => String(l.msg).startsWith('Leaf listening on'))).toBe(true);
    // The caller's own ID is echoed (run() checks it); none is made up for a request without.
    expect(quiet.unasked).toBeNull();
  });
});
