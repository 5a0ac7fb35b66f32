/**
 * Client tokens (docs/security.md, "Callers") over HTTP on MariaDB: the application started
 * with `LEAF_CLIENT_TOKENS`; every ID, number and decode route of the OpenAPI document refuses a
 * caller without a token (401); a token not scoped to the mode or tag is 403; exact names and
 * `*` patterns; the quota (in IDs) answers 429 with Retry-After, allocates nothing, and serves
 * again after the wait; the remote client sends its token and turns a refusal into the typed
 * error.
 */
import { createHash } from 'node:crypto';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import {
  ForbiddenError,
  LeafClient,
  LeafErrorCode,
  RateLimitedError,
  UnauthorizedError,
} from 'nestjs-leaf/client';
import { expectLeafError, inject, startApp, tempDir } from './support/app';
import { describeWithServices } from './support/services';
import { createTestDatabase, type TestDatabase } from './support/test-database';

const ORDERS = 'e2e-orders-token-0123456789abcdef';
const SNOW = 'e2e-snowflake-token-0123456789ab';
const LIMITED = 'e2e-limited-token-0123456789abcd';
const ALL = 'e2e-all-token-0123456789abcdefgh';
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const sha256 = (token: string) => createHash('sha256').update(token).digest('hex');

const CLIENTS = [
  { name: 'orders', sha256: sha256(ORDERS), modes: ['segment'], tags: ['order-*', 'invoice'] },
  { name: 'snow', sha256: sha256(SNOW), modes: ['snowflake'], tags: ['*'] },
  // 2,000 IDs a second, at most 1,000 at once: a spent burst is back within a second.
  {
    name: 'limited',
    sha256: sha256(LIMITED),
    modes: ['*'],
    tags: ['quota-*'],
    idsPerSecond: 2000,
    burst: 1000,
  },
  { name: 'all', sha256: sha256(ALL), modes: ['*'], tags: ['*'] },
];

const TAGS = ['order-1', 'order-eu', 'orders', 'invoice', 'user', 'quota-a'];

describeWithServices(['mysql'], 'client tokens over HTTP on MariaDB', () => {
  let db: TestDatabase;
  let state: ReturnType<typeof tempDir>;
  let app: NestFastifyApplication;
  let url: string;

  beforeAll(async () => {
    db = await createTestDatabase({ migrate: true });
    for (const tag of TAGS) {
      await db.query('INSERT INTO leaf_alloc (biz_tag, max_id, step) VALUES (?, 1, 10)', [tag]);
    }
    state = tempDir('leaf-client-tokens');
    app = await startApp(
      {
        LEAF_DB_URL: db.url,
        LEAF_WORKER_ID: '7',
        LEAF_STATE_DIR: state.path,
        LEAF_CLIENT_TOKENS: JSON.stringify(CLIENTS),
      },
      { listen: true },
    );
    url = (await app.getUrl()).replace('[::1]', '127.0.0.1');
  });

  afterAll(async () => {
    await app?.close();
    await db?.drop();
    state?.remove();
  });

  it('every ID, number and decode route of the OpenAPI document needs a token: 401 without', async () => {
    const doc = JSON.parse((await inject(app, '/docs-json')).body) as {
      paths: Record<string, Record<string, { security?: Array<Record<string, unknown>> }>>;
      components: { securitySchemes: Record<string, Record<string, unknown>> };
    };
    expect(doc.components.securitySchemes.client).toEqual({
      type: 'http',
      scheme: 'bearer',
      description: expect.stringContaining('not a JWT'),
    });
    const covered = Object.keys(doc.paths).filter(
      (path) => path.startsWith('/api/') || path === '/decodeSnowflakeId',
    );
    // get, ids, range, uuid(s), typeid(s), number(s), the decode routes, the empty-key ones.
    expect(covered.length).toBeGreaterThanOrEqual(20);
    for (const path of covered) {
      // GET routes, and the gapless series' POST routes.
      for (const [method, operation] of Object.entries(doc.paths[path])) {
        expect({ path, security: operation.security }).toEqual({
          path,
          security: [{ client: [] }],
        });
        const concrete = path.replace(/\{[^}]+\}/g, 'order-1');
        const query = path === '/decodeSnowflakeId' ? '?snowflakeId=1' : '?count=1&number=1';
        const options = { method: method.toUpperCase() };
        const answer = await inject(app, concrete + query, options);
        expectLeafError(answer, 401, LeafErrorCode.UNAUTHORIZED);
        expect(answer.headers['www-authenticate']).toBe('Bearer');
        const unknown = await inject(app, concrete + query, {
          ...options,
          headers: bearer('x'.repeat(32)),
        });
        expectLeafError(unknown, 401, LeafErrorCode.UNAUTHORIZED);
      }
    }
    // Not the client check's concern: health, metrics, and the peers' internal routes.
    expect((await inject(app, '/health/live')).statusCode).toBe(200);
    expect((await inject(app, '/metrics')).statusCode).toBe(200);
    expect((await inject(app, '/api/sequence/internal/instance')).statusCode).not.toBe(401);
  });

  it('401 for a header that is not a bearer token', async () => {
    for (const authorization of [`Basic ${ORDERS}`, 'Bearer', ORDERS, `Bearer ${ORDERS} extra`]) {
      expectLeafError(
        await inject(app, '/api/segment/get/order-1', { headers: { authorization } }),
        401,
        LeafErrorCode.UNAUTHORIZED,
      );
    }
  });

  it('allowed: 200 on the routes of its mode for its tags (names and patterns)', async () => {
    for (const path of [
      '/api/segment/get/order-1',
      '/api/segment/get/order-eu',
      '/api/segment/get/invoice',
      '/api/segment/ids/order-1?count=5',
      '/api/segment/range/order-eu?count=5',
    ]) {
      expect({
        path,
        status: (await inject(app, path, { headers: bearer(ORDERS) })).statusCode,
      }).toEqual({
        path,
        status: 200,
      });
    }
    // "*" covers every key of its mode, and the snowflake routes without a key.
    for (const path of [
      '/api/snowflake/get/anything',
      '/api/snowflake/uuids/x?count=3',
      '/api/snowflake/typeid/user',
      '/decodeSnowflakeId?snowflakeId=1',
    ]) {
      expect({
        path,
        status: (await inject(app, path, { headers: bearer(SNOW) })).statusCode,
      }).toEqual({
        path,
        status: 200,
      });
    }
  });

  it('403 for a mode or a tag outside the token, before anything is allocated', async () => {
    const before = await db.maxId('user');
    const refused = [
      [ORDERS, '/api/segment/get/user'], // tag
      [ORDERS, '/api/segment/get/orders'], // "order-*" needs the dash
      [ORDERS, '/api/segment/range/user?count=100'],
      [ORDERS, '/api/snowflake/get/order-1'], // mode
      [ORDERS, '/api/snowflake/typeid'],
      [SNOW, '/api/segment/get/user'],
    ] as const;
    for (const [token, path] of refused) {
      const body = expectLeafError(
        await inject(app, path, { headers: bearer(token) }),
        403,
        LeafErrorCode.FORBIDDEN,
      );
      expect(body.message).not.toContain(token);
    }
    expect(await db.maxId('user')).toBe(before);
    expect(await db.maxId('orders')).toBe('1');
  });

  it('the quota: 429 with Retry-After, nothing allocated, served again after the wait', async () => {
    const range = (count: number) =>
      inject(app, `/api/segment/range/quota-a?count=${count}`, { headers: bearer(LIMITED) });
    expect((await range(1000)).statusCode).toBe(200);
    // Let any load the first range started settle before the refusal is measured.
    await new Promise((resolve) => setTimeout(resolve, 300));
    const before = await db.maxId('quota-a');
    expect(BigInt(before!)).toBeGreaterThanOrEqual(1001n);

    const refused = await range(1000);
    const body = expectLeafError(refused, 429, LeafErrorCode.RATE_LIMITED);
    expect(body.message).toContain('limited');
    expect(refused.headers['retry-after']).toBe('1');
    // A request above the burst can never be served: 403, not a wait.
    expectLeafError(await range(1001), 403, LeafErrorCode.FORBIDDEN);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(await db.maxId('quota-a')).toBe(before);

    await new Promise((resolve) =>
      setTimeout(resolve, Number(refused.headers['retry-after']) * 1000),
    );
    const again = await range(1000);
    expect(again.statusCode).toBe(200);
    expect(BigInt((JSON.parse(again.body) as { start: string }).start)).toBeGreaterThanOrEqual(
      BigInt(before!),
    );
  });

  it('the remote client sends its token; without one, or outside its scope, the typed error', async () => {
    const withToken = new LeafClient({ servers: [url], token: ALL });
    const without = new LeafClient({ servers: [url] });
    const scoped = new LeafClient({ servers: [url], token: ORDERS });
    try {
      expect(await withToken.get('segment', 'order-1')).toBeGreaterThan(0n);
      expect(await withToken.getIds('snowflake', 'k', 3)).toHaveLength(3);
      const unauthorized = await without.get('segment', 'order-1').catch((error: unknown) => error);
      expect(unauthorized).toBeInstanceOf(UnauthorizedError);
      expect(unauthorized).toMatchObject({ code: LeafErrorCode.UNAUTHORIZED });
      const forbidden = await scoped.getIds('snowflake', 'k', 1).catch((error: unknown) => error);
      expect(forbidden).toBeInstanceOf(ForbiddenError);
      // The servers answered: a refusal does not mark them down.
      expect(without.stats().servers.every((server) => server.up)).toBe(true);
    } finally {
      await Promise.all([withToken.close(), without.close(), scoped.close()]);
    }
  });

  it('the remote client turns a 429 into RateLimitedError with the wait', async () => {
    const client = new LeafClient({ servers: [url], token: LIMITED, maxBatchSize: 1000 });
    try {
      await inject(app, '/api/snowflake/ids/quota-b?count=1000', { headers: bearer(LIMITED) });
      const error = await client.getIds('snowflake', 'quota-b', 1000).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(RateLimitedError);
      expect((error as RateLimitedError).retryAfterMs).toBe(1000);
    } finally {
      await client.close();
    }
  });
});
