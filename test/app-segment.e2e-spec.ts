import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { LeafErrorCode, SegmentService } from 'nestjs-leaf';
import { eventually } from '@app/leaf/testing/eventually';
import { APP_DATA_SOURCES, type AppDataSources } from '../src/database/database.module';
import { expectLeafError, expectNoStackTrace, inject, startApp, tempDir } from './support/app';
import { BAD_KEYS, badCounts } from './support/bad-input';
import { HttpClient } from './support/http-client';
import { describeWithServices } from './support/services';
import { createTestDatabase, type TestDatabase } from './support/test-database';

const SEGMENT_ROUTES = ['get', 'ids', 'range'] as const;
type SegmentRoute = (typeof SEGMENT_ROUTES)[number];

/** The URL of a segment route for `key` (already URL-encoded) with a valid count. */
function routeUrl(route: SegmentRoute, encodedKey: string, count = '1'): string {
  return route === 'get'
    ? `/api/segment/get/${encodedKey}`
    : `/api/segment/${route}/${encodedKey}?count=${count}`;
}

/** `count` consecutive decimal strings from `first`, computed in bigint. */
function consecutive(first: bigint, count: number): string[] {
  return Array.from({ length: count }, (_, i) => (first + BigInt(i)).toString());
}

/** `/db` as JSON: `max_id` per tag, exact. */
async function maxIds(app: NestFastifyApplication): Promise<Map<string, string>> {
  const answer = await inject(app, '/db', { headers: { accept: 'application/json' } });
  expect(answer.statusCode).toBe(200);
  const rows = JSON.parse(answer.body) as Array<{ tag: string; maxId: string }>;
  return new Map(rows.map((row) => [row.tag, row.maxId]));
}

/** Inserts a tag through the application's own DataSource and makes the running app see it. */
async function addTag(
  app: NestFastifyApplication,
  tag: string,
  maxId: string,
  step: number,
): Promise<void> {
  const dataSource = app.get<AppDataSources>(APP_DATA_SOURCES).dataSource!;
  // max_id as SQL text: a JavaScript number parameter would round values beyond 2^53.
  await dataSource.query(
    `INSERT INTO leaf_alloc (biz_tag, max_id, step) VALUES (?, ${BigInt(maxId).toString()}, ?)`,
    [tag, step],
  );
  await app.get(SegmentService).refreshTags();
}

/** Issues `count` sequential `GET /api/segment/get/{tag}`; every answer must be a 200 decimal. */
async function getSequence(
  app: NestFastifyApplication,
  tag: string,
  count: number,
): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const answer = await inject(app, `/api/segment/get/${tag}`);
    expect({ status: answer.statusCode, body: answer.body }).toEqual({
      status: 200,
      body: expect.stringMatching(/^\d+$/),
    });
    ids.push(answer.body);
  }
  return ids;
}

describeWithServices(['mysql'], 'segment routes over HTTP on MariaDB', () => {
  const MAX_BATCH = 50;
  /** The range route's own cap (LEAF_MAX_RANGE), separate from the batch cap. */
  const MAX_RANGE = 2000;
  let db: TestDatabase;
  let state: ReturnType<typeof tempDir>;
  let app: NestFastifyApplication;

  beforeAll(async () => {
    db = await createTestDatabase();
    state = tempDir('leaf-app-segment');
    app = await startApp({
      LEAF_DB_URL: db.url,
      LEAF_DB_MIGRATE: 'true',
      LEAF_MAX_BATCH: String(MAX_BATCH),
      LEAF_MAX_RANGE: String(MAX_RANGE),
      LEAF_SNOWFLAKE_ENABLED: 'false',
      LEAF_STATE_DIR: state.path,
    });
  });

  afterAll(async () => {
    await app?.close();
    await db?.drop();
    state?.remove();
  });

  describe('the three routes', () => {
    it("GET /api/segment/get/{key} answers Leaf's text/plain decimal, no newline: 1 then 2", async () => {
      const first = await inject(app, '/api/segment/get/leaf-segment-test');
      expect(first.statusCode).toBe(200);
      expect(first.headers['content-type']).toBe('text/plain; charset=utf-8');
      expect(first.body).toBe('1');
      const second = await inject(app, '/api/segment/get/leaf-segment-test');
      expect(second.body).toBe('2');
    });

    it('GET /api/segment/ids/{key}?count=N answers N consecutive IDs as strings', async () => {
      const answer = await inject(app, '/api/segment/ids/leaf-segment-test?count=5');
      expect(answer.statusCode).toBe(200);
      expect(answer.headers['content-type']).toMatch(/^application\/json/);
      expect(JSON.parse(answer.body)).toEqual({
        key: 'leaf-segment-test',
        ids: ['3', '4', '5', '6', '7'],
      });

      const cap = await inject(app, `/api/segment/ids/leaf-segment-test?count=${MAX_BATCH}`);
      expect(cap.statusCode).toBe(200);
      expect((JSON.parse(cap.body) as { ids: string[] }).ids).toEqual(consecutive(8n, MAX_BATCH));
    });

    it('GET /api/segment/range/{key}?count=N answers a half-open range owned by the caller', async () => {
      const answer = await inject(app, '/api/segment/range/leaf-segment-test?count=5');
      expect(answer.statusCode).toBe(200);
      expect(answer.headers['content-type']).toMatch(/^application\/json/);
      expect(JSON.parse(answer.body)).toEqual({
        key: 'leaf-segment-test',
        start: '58',
        end: '63',
        count: 5,
      });
      expect((await inject(app, '/api/segment/get/leaf-segment-test')).body).toBe('63');
    });

    it('a range above the batch cap, up to LEAF_MAX_RANGE, comes from a fresh allocation', async () => {
      const answer = await inject(app, `/api/segment/range/leaf-segment-test?count=${MAX_RANGE}`);
      expect(answer.statusCode).toBe(200);
      const { start, end } = JSON.parse(answer.body) as { start: string; end: string };
      expect(BigInt(end) - BigInt(start)).toBe(BigInt(MAX_RANGE));
      // Later single IDs come above the range (docs/design.md, "Ordering").
      const next = BigInt((await inject(app, '/api/segment/get/leaf-segment-test')).body);
      expect(next).toBeGreaterThanOrEqual(BigInt(end));
    });

    it('a range that does not fit the current segment comes from the database, disjoint from every other ID and above every earlier one', async () => {
      await addTag(app, 'small-step', '1', 10);
      const issued = new Set<bigint>();
      const take = (id: bigint): void => {
        expect(issued.has(id)).toBe(false);
        issued.add(id);
      };
      for (let round = 0; round < 20; round++) {
        for (const id of await getSequence(app, 'small-step', 3)) take(BigInt(id));
        const answer = await inject(app, '/api/segment/range/small-step?count=9');
        expect(answer.statusCode).toBe(200);
        const { start, end } = JSON.parse(answer.body) as { start: string; end: string };
        expect(BigInt(end) - BigInt(start)).toBe(9n);
        expect(BigInt(start)).toBeGreaterThan([...issued].reduce((a, b) => (a > b ? a : b), 0n));
        for (let id = BigInt(start); id < BigInt(end); id++) take(id);
      }
      expect(issued.size).toBe(20 * 12);
      const max = [...issued].reduce((a, b) => (a > b ? a : b));
      expect(BigInt((await maxIds(app)).get('small-step')!)).toBeGreaterThan(max);
    });
  });

  describe('400 for malformed input, touching nothing', () => {
    beforeAll(async () => {
      await addTag(app, 'untouched', '1', 1000);
      expect((await inject(app, '/api/segment/get/untouched')).body).toBe('1');
    });

    it.each(SEGMENT_ROUTES)('%s: empty key', async (route) => {
      const url = route === 'get' ? '/api/segment/get/' : `/api/segment/${route}/?count=1`;
      expectLeafError(await inject(app, url), 400, LeafErrorCode.INVALID_ARGUMENT);
    });

    for (const route of SEGMENT_ROUTES) {
      it.each(BAD_KEYS)(`${route}: key with %s`, async (_label, key) => {
        expectLeafError(
          await inject(app, routeUrl(route, key)),
          400,
          LeafErrorCode.INVALID_ARGUMENT,
        );
      });
    }

    it('a 128-character key is well-formed (unknown tag: 404, not 400)', async () => {
      const answer = await inject(app, `/api/segment/get/${'a'.repeat(128)}`);
      expectLeafError(answer, 404, LeafErrorCode.TAG_NOT_FOUND);
    });

    for (const [route, cap] of [
      ['ids', MAX_BATCH],
      ['range', MAX_RANGE],
    ] as const) {
      it.each(badCounts(cap))(`${route}: count %s`, async (_label, query) => {
        const answer = await inject(
          app,
          `/api/segment/${route}/untouched${query ? `?${query}` : ''}`,
        );
        const body = expectLeafError(answer, 400, LeafErrorCode.INVALID_ARGUMENT);
        expect(body.leafCode).toBeUndefined();
      });
    }

    it.each([
      ['negative', '-1'],
      ['above 2^63-1', '9223372036854775808'],
      ['not decimal', '0x10'],
      ['empty', ''],
    ])('range: after %s', async (_label, after) => {
      const answer = await inject(app, `/api/segment/range/untouched?count=1&after=${after}`);
      expectLeafError(answer, 400, LeafErrorCode.INVALID_ARGUMENT);
    });

    it('no ID was consumed and no row created by any of the above', async () => {
      expect((await inject(app, '/api/segment/get/untouched')).body).toBe('2');
      // Only the first range [1, 1001) was ever taken: no count reached the database.
      expect(await db.maxId('untouched')).toBe('1001');
      const tags = [...(await maxIds(app)).keys()];
      expect(tags.every((tag) => /^[A-Za-z0-9_.:-]{1,128}$/.test(tag))).toBe(true);
      expect(tags).not.toContain('a'.repeat(128));
    });
  });

  describe('404 for an unknown tag', () => {
    it.each(SEGMENT_ROUTES)(
      '%s: LEAF_TAG_NOT_FOUND with leafCode -2, and no row is created',
      async (route) => {
        const body = expectLeafError(
          await inject(app, routeUrl(route, 'no-such-tag')),
          404,
          LeafErrorCode.TAG_NOT_FOUND,
        );
        expect(body.leafCode).toBe(-2);
        expect((await maxIds(app)).has('no-such-tag')).toBe(false);
      },
    );
  });

  describe('only GET is served', () => {
    const methods = ['POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'HEAD'];

    it.each(methods)('%s on the segment routes is refused and consumes no ID', async (method) => {
      const tag = `method-${method.toLowerCase()}`;
      await addTag(app, tag, '1', 1000);
      expect((await inject(app, `/api/segment/get/${tag}`)).body).toBe('1');
      for (const route of SEGMENT_ROUTES) {
        const answer = await inject(app, routeUrl(route, tag), { method });
        expect([404, 405]).toContain(answer.statusCode);
        expectNoStackTrace(answer.body);
      }
      expect((await inject(app, `/api/segment/get/${tag}`)).body).toBe('2');
    });
  });

  describe('health and monitoring', () => {
    it('/health/live is up', async () => {
      const answer = await inject(app, '/health/live');
      expect(answer.statusCode).toBe(200);
      expect(JSON.parse(answer.body)).toEqual(expect.objectContaining({ status: 'ok' }));
    });

    it('/health/ready is up with the segment indicator', async () => {
      const answer = await inject(app, '/health/ready');
      expect(answer.statusCode).toBe(200);
      const body = JSON.parse(answer.body) as {
        status: string;
        info: { segment: { status: string } };
      };
      expect(body.status).toBe('ok');
      expect(body.info.segment.status).toBe('up');
    });

    it('/cache answers HTML by default and JSON on request, IDs as strings', async () => {
      await inject(app, '/api/segment/get/leaf-segment-test');
      const html = await inject(app, '/cache');
      expect(html.statusCode).toBe(200);
      expect(html.headers['content-type']).toMatch(/^text\/html/);
      expect(html.body).toContain('<table');
      expect(html.body).toContain('leaf-segment-test');

      const json = await inject(app, '/cache', { headers: { accept: 'application/json' } });
      expect(json.statusCode).toBe(200);
      expect(json.headers['content-type']).toMatch(/^application\/json/);
      const snapshot = JSON.parse(json.body) as {
        initialized: boolean;
        highWater: { state: string; root: string | null };
        buffers: Array<{
          tag: string;
          initialized: boolean;
          current: { value: string; max: string } | null;
          highWater: string | null;
        }>;
      };
      expect(snapshot.initialized).toBe(true);
      // No ZooKeeper configured: the mark is off (the system scenarios show it on).
      expect(snapshot.highWater).toEqual({ state: 'off', store: null, root: null });
      expect(html.body).toContain('<th>high-water mark</th>');
      const buffer = snapshot.buffers.find((b) => b.tag === 'leaf-segment-test');
      expect(buffer).toEqual(
        expect.objectContaining({
          initialized: true,
          current: expect.objectContaining({
            value: expect.stringMatching(/^\d+$/),
            max: expect.stringMatching(/^\d+$/),
          }),
          highWater: null,
        }),
      );
    });

    it('/db answers HTML by default and JSON on request, max_id as an exact string', async () => {
      const html = await inject(app, '/db');
      expect(html.statusCode).toBe(200);
      expect(html.headers['content-type']).toMatch(/^text\/html/);
      expect(html.body).toContain('max_id');
      expect(html.body).toContain('leaf-segment-test');

      const json = await inject(app, '/db', { headers: { accept: 'application/json' } });
      expect(json.statusCode).toBe(200);
      expect(json.headers['content-type']).toMatch(/^application\/json/);
      const rows = JSON.parse(json.body) as Array<Record<string, unknown>>;
      expect(rows.find((row) => row.tag === 'leaf-segment-test')).toEqual({
        tag: 'leaf-segment-test',
        maxId: expect.stringMatching(/^\d+$/),
        step: 2000,
        description: 'Test leaf Segment Mode Get Id',
        updateTime: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      });
    });
  });

  describe('64-bit IDs', () => {
    it('a tag at max_id 9007199254740990 answers exact IDs across 2^53', async () => {
      await addTag(app, 'beyond-2-53', '9007199254740990', 10);
      await expectExactIdsBeyond2to53(app, 'beyond-2-53');
      // The same exact value in the table and on /db (read again if a background preload
      // moved max_id between the two reads).
      await eventually(async () =>
        expect(await db.maxId('beyond-2-53')).toBe((await maxIds(app)).get('beyond-2-53')),
      );
    });

    it('a tag that would pass 2^63-1 gets LEAF_ID_OVERFLOW (503), never an ID, and max_id stays', async () => {
      await addTag(app, 'near-max', '9223372036854775800', 10);
      const answer = await inject(app, '/api/segment/get/near-max');
      expectLeafError(answer, 503, LeafErrorCode.ID_OVERFLOW);
      expect(await db.maxId('near-max')).toBe('9223372036854775800');
    });
  });
});

/**
 * 25 single IDs, then 7 through `ids`, all consecutive from 9007199254740990 (one instance
 * alone on the tag takes contiguous ranges), then a range of 3 above them: compared as
 * exact strings, so a trip through a JavaScript number (which cannot hold 2^53 + 1) fails.
 */
async function expectExactIdsBeyond2to53(app: NestFastifyApplication, tag: string): Promise<void> {
  const singles = await getSequence(app, tag, 25);
  expect(singles.slice(0, 4)).toEqual([
    '9007199254740990',
    '9007199254740991',
    '9007199254740992',
    '9007199254740993',
  ]);
  expect(singles).toEqual(consecutive(9007199254740990n, 25));

  const ids = await inject(app, `/api/segment/ids/${tag}?count=7`);
  expect(ids.statusCode).toBe(200);
  expect(JSON.parse(ids.body)).toEqual({ key: tag, ids: consecutive(9007199254741015n, 7) });

  const range = await inject(app, `/api/segment/range/${tag}?count=3`);
  expect(range.statusCode).toBe(200);
  const { start, end } = JSON.parse(range.body) as { start: string; end: string };
  expect(start).toMatch(/^\d+$/);
  expect(BigInt(start)).toBeGreaterThanOrEqual(9007199254741022n);
  expect(end).toBe((BigInt(start) + 3n).toString());
}

describe('segment mode disabled (LEAF_SEGMENT_ENABLED=false)', () => {
  let state: ReturnType<typeof tempDir>;
  let app: NestFastifyApplication;

  beforeAll(async () => {
    state = tempDir('leaf-disabled');
    app = await startApp({
      LEAF_SEGMENT_ENABLED: 'false',
      LEAF_SNOWFLAKE_ENABLED: 'false',
      LEAF_STATE_DIR: state.path,
      // Must not be opened at all when the mode is off.
      LEAF_DB_URL: `sqlite:${join(state.path, 'must-not-exist', 'leaf.sqlite')}`,
    });
  });

  afterAll(async () => {
    await app?.close();
    state?.remove();
  });

  it.each(SEGMENT_ROUTES)('%s: 404 LEAF_MODE_DISABLED', async (route) => {
    expectLeafError(
      await inject(app, routeUrl(route, 'leaf-segment-test')),
      404,
      LeafErrorCode.MODE_DISABLED,
    );
  });

  it('/db is 404 LEAF_MODE_DISABLED, readiness is up with segment disabled, no database was opened', async () => {
    expectLeafError(await inject(app, '/db'), 404, LeafErrorCode.MODE_DISABLED);
    const ready = await inject(app, '/health/ready');
    expect(ready.statusCode).toBe(200);
    expect(JSON.parse(ready.body)).toEqual(
      expect.objectContaining({
        status: 'ok',
        info: expect.objectContaining({ segment: { status: 'up', enabled: false } }),
      }),
    );
    expect(existsSync(join(state.path, 'must-not-exist'))).toBe(false);
  });
});

describe('embedded default: SQLite from an empty state directory', () => {
  let dir: ReturnType<typeof tempDir>;
  let env: Record<string, string>;

  beforeAll(() => {
    dir = tempDir('leaf-embedded');
    // Only what a user on a bare machine would have: a place for the file and the state.
    env = { LEAF_DB_URL: `sqlite:${join(dir.path, 'leaf.sqlite')}`, LEAF_STATE_DIR: dir.path };
  });

  afterAll(() => {
    dir?.remove();
  });

  /** Boots the embedded app on a real port, runs `body` with a client, and closes both. */
  async function run<T>(
    body: (app: NestFastifyApplication, client: HttpClient) => Promise<T>,
  ): Promise<T> {
    const app = await startApp(env, { listen: true });
    const client = new HttpClient(HttpClient.baseUrlOf(app), 1);
    try {
      return await body(app, client);
    } finally {
      client.close();
      await app.close();
    }
  }

  it('migrates, seeds leaf-segment-test, answers 1 then 2 over HTTP, and never re-issues an ID after a restart', async () => {
    expect(existsSync(join(dir.path, 'leaf.sqlite'))).toBe(false);

    const firstRun = await run(async (app, client) => {
      const one = await client.send('/api/segment/get/leaf-segment-test');
      expect({ status: one.status, type: one.headers['content-type'], body: one.body }).toEqual({
        status: 200,
        type: 'text/plain; charset=utf-8',
        body: '1',
      });
      expect((await client.send('/api/segment/get/leaf-segment-test')).body).toBe('2');
      // Past the 10 % mark of the first range, so the second one is loaded too.
      const batch = await client.send('/api/segment/ids/leaf-segment-test?count=300');
      expect(batch.status).toBe(200);
      const ids = ['1', '2', ...(JSON.parse(batch.body) as { ids: string[] }).ids].map(BigInt);
      expect(ids).toEqual(consecutive(1n, 302).map(BigInt));
      return { ids, maxIds: await maxIds(app) };
    });
    expect(existsSync(join(dir.path, 'leaf.sqlite'))).toBe(true);
    const highestIssued = firstRun.ids[firstRun.ids.length - 1];

    const secondRun = await run(async (_app, client) => {
      const ids = await Promise.all(
        Array.from({ length: 5 }, async () =>
          BigInt((await client.send('/api/segment/get/leaf-segment-test')).body),
        ),
      );
      return ids;
    });
    // The first run held [1, 2001) and the preloaded [2001, 4001); its graceful stop handed the
    // unused tail back (max_id 4001 → 303), so the restart goes on right after the highest ID
    // issued: no gap, and never an ID twice.
    expect(BigInt(firstRun.maxIds.get('leaf-segment-test')!)).toBe(4001n);
    expect([...secondRun].sort((a, b) => (a < b ? -1 : 1))).toEqual([303n, 304n, 305n, 306n, 307n]);
    for (const id of secondRun) expect(id).toBeGreaterThan(highestIssued);
  });

  it('a tag at max_id 9007199254740990 answers exact IDs across 2^53 on SQLite too', async () => {
    await run(async (app) => {
      await addTag(app, 'beyond-2-53', '9007199254740990', 10);
      await expectExactIdsBeyond2to53(app, 'beyond-2-53');
      const maxId = (await maxIds(app)).get('beyond-2-53')!;
      expect(BigInt(maxId)).toBeGreaterThan(9007199254741024n);
    });
  });
});
