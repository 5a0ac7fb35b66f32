/**
 * A fuzz test of every route's parameters (docs/security.md, "At the door"), with fast-check,
 * on PostgreSQL (the database that refuses a NUL byte): mode, key, count, after, format,
 * number, the decode ID and the admin bodies, each drawn from valid values, raw bytes
 * (%-encoded: NUL, control characters, invalid UTF-8), UTF-16 with lone surrogates and random
 * JSON. Every answer is a 2xx or a 4xx, never a 5xx, with no stack trace and no database text.
 * `LEAF_FUZZ_RUNS` (default 300 requests) makes a longer run.
 */
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import fc from 'fast-check';
import { expectNoStackTrace, startSelfAdvertisingApp, tempDir } from './support/app';
import { DATABASE_TEXT } from './support/bad-input';
import { createPostgresTestDatabase } from './support/postgres-database';
import type { ServerTestDatabase } from './support/server-databases';
import { describeWithServices } from './support/services';
import { NEW_FORMAT_FIELDS } from '../src/admin/format-row.json';

jest.setTimeout(180_000);

const RUNS = Number(process.env.LEAF_FUZZ_RUNS ?? 300);
const TOKEN = 'e2e-fuzz-admin-token-0123456789abcdef';

/** Bytes as a path or query value: every byte %-encoded. */
const encoded = (bytes: Uint8Array): string =>
  [...bytes].map((b) => `%${b.toString(16).padStart(2, '0')}`).join('');

/** UTF-16 code units, lone surrogates and controls included. */
const utf16 = fc
  .array(fc.integer({ min: 0, max: 0xffff }), { maxLength: 24 })
  .map((units) => String.fromCharCode(...units));

/** A value for a path segment or a query parameter, as it goes on the wire. */
const wireText = fc.oneof(
  fc.constantFrom('sn', 'door', 'orders', 'seqn', 'k', '', '%00', '%ED%A0%80', '%C0%AF', '%FF'),
  fc.stringMatching(/^[A-Za-z0-9_.:-]{1,12}$/),
  fc.uint8Array({ maxLength: 40 }).map(encoded),
  fc.string({ maxLength: 140 }).map(encodeURIComponent),
);

const count = fc.oneof(
  fc.integer({ min: -2, max: 1_000_001 }).map(String),
  fc.constantFrom('', '1e3', '0x10', '1.5', '99999999999', '%00'),
  wireText,
);
const after = fc.oneof(
  fc.bigInt({ min: 0n, max: 2n ** 64n }).map(String),
  fc.constantFrom('9223372036854775807', '-1', '%00'),
  wireText,
);
const idFormat = fc.oneof(fc.constantFrom('base62', 'base36', 'base32', 'decimal', ''), wireText);
const mode = fc.oneof(fc.constantFrom('segment', 'sequence', 'snowflake'), wireText);

/** A JSON value an admin body field may get: right type or not, bad text included. */
const fieldValue = fc.oneof(
  fc.jsonValue({ maxDepth: 2 }),
  utf16,
  fc.integer({ min: -5, max: 40 }),
  fc.constantFrom('UTC', '+05:00', 'Asia/Shanghai', 'yyyyMMdd', 'day', 'sequence', '6', 'a\u0000b'),
);
const body = (fields: readonly string[]) =>
  fc.dictionary(fc.oneof(fc.constantFrom(...fields), fc.string({ maxLength: 8 })), fieldValue, {
    maxKeys: 6,
  });
const TAG_FIELDS = ['biz_tag', 'step', 'max_id', 'description'];

interface Request {
  readonly method: 'GET' | 'POST' | 'PATCH';
  readonly url: string;
  readonly body?: unknown;
}

/** One request to any route, its parameters drawn as above. */
const request: fc.Arbitrary<Request> = fc.oneof(
  fc
    .tuple(mode, wireText, idFormat)
    .map(([m, k, f]) => ({ method: 'GET' as const, url: `/api/${m}/get/${k}?format=${f}` })),
  fc.tuple(mode, wireText, count, idFormat).map(([m, k, c, f]) => ({
    method: 'GET' as const,
    url: `/api/${m}/ids/${k}?count=${c}&format=${f}`,
  })),
  fc.tuple(wireText, count, after).map(([k, c, a]) => ({
    method: 'GET' as const,
    url: `/api/segment/range/${k}?count=${c}&after=${a}`,
  })),
  fc
    .tuple(mode, wireText)
    .map(([m, k]) => ({ method: 'GET' as const, url: `/api/${m}/number/${k}` })),
  fc.tuple(mode, wireText, count).map(([m, k, c]) => ({
    method: 'GET' as const,
    url: `/api/${m}/numbers/${k}?count=${c}`,
  })),
  fc.tuple(wireText, wireText).map(([k, n]) => ({
    method: 'GET' as const,
    url: `/api/number/decode/${k}?number=${n}`,
  })),
  fc
    .tuple(wireText, fc.constantFrom('id', 'snowflakeId'))
    .map(([id, name]) => ({ method: 'GET' as const, url: `/decodeSnowflakeId?${name}=${id}` })),
  fc.tuple(fc.constantFrom('tags', 'formats'), wireText).map(([what, k]) => ({
    method: 'GET' as const,
    url: `/admin/${what}/${k}`,
  })),
  fc.tuple(wireText, body(['step', 'description'])).map(([k, b]) => ({
    method: 'PATCH' as const,
    url: `/admin/tags/${k}`,
    body: b,
  })),
  fc.tuple(wireText, body(['width', 'description'])).map(([k, b]) => ({
    method: 'PATCH' as const,
    url: `/admin/formats/${k}`,
    body: b,
  })),
  body(TAG_FIELDS).map((b) => ({ method: 'POST' as const, url: '/admin/tags', body: b })),
  body(NEW_FORMAT_FIELDS).map((b) => ({ method: 'POST' as const, url: '/admin/formats', body: b })),
);

describeWithServices(['postgres'], 'fuzzing every route at the door (PostgreSQL)', () => {
  let db: ServerTestDatabase;
  let state: ReturnType<typeof tempDir>;
  let app: NestFastifyApplication;

  beforeAll(async () => {
    db = await createPostgresTestDatabase({ migrate: true });
    state = tempDir('leaf-fuzz');
    app = await startSelfAdvertisingApp({
      LEAF_DB_URL: db.url,
      LEAF_STATE_DIR: state.path,
      LEAF_WORKER_ID: '5',
      LEAF_NAME: `fuzz${Date.now().toString(36)}`,
      LEAF_ADMIN_TOKEN: TOKEN,
    });
    for (const tag of ['door', 'sn', 'seqn']) {
      await db.query(`INSERT INTO leaf_alloc (biz_tag, max_id, step) VALUES ('${tag}', 1, 100)`);
    }
    for (const [tag, mode] of [
      ['sn', 'segment'],
      ['seqn', 'sequence'],
    ]) {
      await db.query(
        `INSERT INTO leaf_number_format (biz_tag, leaf_mode, prefix, number_separator, time_zone, counter_width, reset_period) VALUES ('${tag}', '${mode}', 'SN', '-', 'UTC', 6, 'none')`,
      );
    }
  });

  afterAll(async () => {
    await app?.close();
    await db?.drop();
    state?.remove();
  });

  it(`answers ${RUNS} random requests with a 2xx or 4xx, no stack trace, no database text`, async () => {
    const statuses: Record<number, number> = {};
    await fc.assert(
      fc.asyncProperty(request, async (req) => {
        const res = await app
          .getHttpAdapter()
          .getInstance()
          .inject({
            method: req.method,
            url: req.url,
            headers: {
              authorization: `Bearer ${TOKEN}`,
              ...(req.body !== undefined ? { 'content-type': 'application/json' } : {}),
            },
            ...(req.body !== undefined ? { payload: JSON.stringify(req.body) } : {}),
          });
        statuses[res.statusCode] = (statuses[res.statusCode] ?? 0) + 1;
        expect({ req, status: res.statusCode < 500 ? 'below 500' : res.statusCode }).toEqual({
          req,
          status: 'below 500',
        });
        expectNoStackTrace(res.body);
        if (res.statusCode >= 400)
          expect({ req, body: res.body }).not.toEqual({
            req,
            body: expect.stringMatching(DATABASE_TEXT),
          });
      }),
      {
        numRuns: RUNS,
        seed: process.env.LEAF_FUZZ_SEED ? Number(process.env.LEAF_FUZZ_SEED) : undefined,
      },
    );
    console.log(`[fuzz] ${RUNS} requests: ${JSON.stringify(statuses)}`);
  });
});
