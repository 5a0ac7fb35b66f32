/**
 * Per-key state is bounded (docs/security.md, "At the door"), the CI subset: 3,000 distinct
 * keys nobody created, sent to every route that takes one (segment and sequence IDs, business
 * numbers, decode), leave no metric series of their own: `/metrics` names none of them, and
 * the app keeps answering. The 100,000-key run with RSS and lease figures is
 * test/system/door-flood.system-spec.ts.
 */
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { type InjectedAnswer, startSelfAdvertisingApp, tempDir } from './support/app';
import { runBounded } from './support/http-client';
import { describeWithServices } from './support/services';
import { createTestDatabase, type TestDatabase } from './support/test-database';
import { UNKNOWN_KEY_ROUTES } from './support/bad-input';

jest.setTimeout(120_000);

/** Distinct unknown keys (`LEAF_FLOOD_KEYS` for a bigger run). */
const KEYS = Number(process.env.LEAF_FLOOD_KEYS ?? 1000);
const TOKEN = 'e2e-flood-admin-token-0123456789abcdef';

describeWithServices(['mysql'], 'per-key state is bounded (1,000 unknown keys)', () => {
  let db: TestDatabase;
  let state: ReturnType<typeof tempDir>;
  let app: NestFastifyApplication;

  const get = async (url: string): Promise<InjectedAnswer> => {
    const res = await app
      .getHttpAdapter()
      .getInstance()
      .inject({ method: 'GET', url, headers: { authorization: `Bearer ${TOKEN}` } });
    return { statusCode: res.statusCode, headers: res.headers, body: res.body };
  };

  beforeAll(async () => {
    db = await createTestDatabase({ migrate: true });
    state = tempDir('leaf-flood');
    app = await startSelfAdvertisingApp({
      LEAF_DB_URL: db.url,
      LEAF_SNOWFLAKE_ENABLED: 'false',
      LEAF_STATE_DIR: state.path,
      LEAF_NAME: `flood${Date.now().toString(36)}`,
      LEAF_ADMIN_TOKEN: TOKEN,
    });
    await db.query("INSERT INTO leaf_alloc (biz_tag, max_id, step) VALUES ('known', 1, 100)");
  });

  afterAll(async () => {
    await app?.close();
    await db?.drop();
    state?.remove();
  });

  it('creates no series, buffer or memo a caller can grow by naming keys', async () => {
    // A known tag, on both modes, so that its own series exist.
    expect((await get('/api/segment/get/known')).statusCode).toBe(200);
    expect((await get('/api/sequence/get/known')).statusCode).toBe(200);
    const statuses: Record<number, number> = {};
    const answers = await runBounded(KEYS, 32, async (i) => {
      const key = `flood-${i.toString(36)}`;
      return get(UNKNOWN_KEY_ROUTES[i % UNKNOWN_KEY_ROUTES.length]!(key));
    });
    for (const answer of answers)
      statuses[answer.statusCode] = (statuses[answer.statusCode] ?? 0) + 1;
    expect(Object.keys(statuses).every((status) => Number(status) < 500)).toBe(true);

    const metrics = await get('/metrics');
    expect(metrics.statusCode).toBe(200);
    const lines = metrics.body.split('\n');
    console.log(
      `[flood] ${KEYS} unknown keys: statuses ${JSON.stringify(statuses)}, /metrics ${metrics.body.length} bytes, ${lines.length} lines`,
    );
    expect(lines.filter((line) => line.includes('flood-')).slice(0, 5)).toEqual([]);
    expect(metrics.body).toContain('tag="known"');
    expect(metrics.body.length).toBeLessThan(2_000_000);
    expect((await get('/health/ready')).statusCode).toBe(200);
  });
});
