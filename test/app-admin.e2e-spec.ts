/**
 * The admin API and the monitoring-page switches over HTTP, on MariaDB and on PostgreSQL: two applications on
 * one database (A creates, B serves at once), the bearer token (missing, wrong, right; the
 * constant-time comparison), the negative cache of unknown keys, LEAF_MONITOR_PAGES.
 */
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { type LeafAllocStore } from 'nestjs-leaf';
import { LEAF_ALLOC_STORE } from '@app/leaf/nest/leaf.constants';
import { expectLeafError, inject, startApp, tempDir, type InjectedAnswer } from './support/app';
import { SERVER_FLAVOURS, type ServerTestDatabase } from './support/server-databases';
import { describeWithServices } from './support/services';

const TOKEN = 'e2e-admin-token-0123456789abcdef';
const AUTH = { authorization: `Bearer ${TOKEN}` };

/** A request with an optional JSON body, through Fastify's inject. */
async function call(
  app: NestFastifyApplication,
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE',
  url: string,
  options: { headers?: Record<string, string>; body?: unknown } = {},
): Promise<InjectedAnswer> {
  const res = await app
    .getHttpAdapter()
    .getInstance()
    .inject({
      method,
      url,
      headers: {
        ...(options.body !== undefined ? { 'content-type': 'application/json' } : {}),
        ...options.headers,
      },
      ...(options.body !== undefined ? { payload: JSON.stringify(options.body) } : {}),
    });
  return { statusCode: res.statusCode, headers: res.headers, body: res.body };
}

for (const flavour of SERVER_FLAVOURS) {
  describeWithServices(
    [flavour.service],
    `admin API and monitoring pages over HTTP on ${flavour.label}`,
    () => {
      let db: ServerTestDatabase;
      let state: ReturnType<typeof tempDir>;
      /** Admin token set: creates. */
      let a: NestFastifyApplication;
      /** Admin token set, pages behind the token: serves what A created. */
      let b: NestFastifyApplication;
      /** No admin token, pages off. */
      let plain: NestFastifyApplication;

      const env = (extra: Record<string, string>) => ({
        LEAF_DB_URL: db.url,
        LEAF_SNOWFLAKE_ENABLED: 'false',
        LEAF_STATE_DIR: state.path,
        ...extra,
      });

      beforeAll(async () => {
        db = await flavour.create();
        state = tempDir('leaf-app-admin');
        a = await startApp(env({ LEAF_DB_MIGRATE: 'true', LEAF_ADMIN_TOKEN: TOKEN }));
        b = await startApp(env({ LEAF_ADMIN_TOKEN: TOKEN, LEAF_MONITOR_PAGES: 'token' }));
        plain = await startApp(env({ LEAF_MONITOR_PAGES: 'off' }));
      });

      afterAll(async () => {
        await Promise.all([a?.close(), b?.close(), plain?.close()]);
        await db?.drop();
        state?.remove();
      });

      describe('the token', () => {
        it('without LEAF_ADMIN_TOKEN there are no admin routes', async () => {
          expectLeafError(await call(plain, 'GET', '/admin/tags'), 404, 'LEAF_HTTP_404');
          expectLeafError(
            await call(plain, 'POST', '/admin/tags', {
              headers: AUTH,
              body: { biz_tag: 'x', step: 1 },
            }),
            404,
            'LEAF_HTTP_404',
          );
        });

        it('answers 401 LEAF_UNAUTHORIZED without a token, with a wrong one, or another scheme', async () => {
          const attempts: Array<Record<string, string>> = [
            {},
            { authorization: 'Bearer wrong-token-0123456789abcdef' },
            { authorization: `Bearer ${TOKEN}x` },
            { authorization: `Basic ${TOKEN}` },
            { authorization: TOKEN },
          ];
          for (const headers of attempts) {
            const answer = await call(a, 'GET', '/admin/tags', { headers });
            expectLeafError(answer, 401, 'LEAF_UNAUTHORIZED');
            expect(answer.headers['www-authenticate']).toBe('Bearer');
          }
          const refused = await call(a, 'POST', '/admin/tags', {
            headers: { authorization: 'Bearer nope' },
            body: { biz_tag: 'never-created', step: 10 },
          });
          expectLeafError(refused, 401, 'LEAF_UNAUTHORIZED');
          expect(await db.maxId('never-created')).toBeNull();
        });

        it('compares the token with crypto.timingSafeEqual on equal-length digests', async () => {
          // eslint-disable-next-line @typescript-eslint/no-require-imports
          const crypto = require('node:crypto') as typeof import('node:crypto');
          const spy = jest.spyOn(crypto, 'timingSafeEqual');
          try {
            expect((await call(a, 'GET', '/admin/tags', { headers: AUTH })).statusCode).toBe(200);
            expect(
              (await call(a, 'GET', '/admin/tags', { headers: { authorization: 'Bearer x' } }))
                .statusCode,
            ).toBe(401);
            expect(spy).toHaveBeenCalledTimes(2);
            for (const [x, y] of spy.mock.calls) {
              expect([(x as Buffer).length, (y as Buffer).length]).toEqual([32, 32]);
            }
          } finally {
            spy.mockRestore();
          }
        });
      });

      describe('tags', () => {
        it('creates a tag on A (max_id 1 by default) and B serves it at once', async () => {
          const created = await call(a, 'POST', '/admin/tags', {
            headers: AUTH,
            body: { biz_tag: 'orders', step: 100, description: 'orders' },
          });
          expect(created.statusCode).toBe(201);
          expect(JSON.parse(created.body)).toMatchObject({
            biz_tag: 'orders',
            max_id: '1',
            step: 100,
            description: 'orders',
            update_time: expect.any(String),
          });
          // B's tag list (read at its start) does not have it: the first request looks it up.
          expect((await call(b, 'GET', '/api/segment/get/orders')).body).toBe('1');
          expect((await call(a, 'GET', '/api/segment/get/orders')).body).toBe('101');
          expect((await call(b, 'GET', '/api/segment/get/orders')).body).toBe('2');
        });

        it('keeps max_id beyond 2^53 exact, as a decimal string', async () => {
          const start = ((1n << 60n) + 7n).toString();
          const created = await call(a, 'POST', '/admin/tags', {
            headers: AUTH,
            body: { biz_tag: 'big', max_id: start, step: 10 },
          });
          expect(JSON.parse(created.body)).toMatchObject({ max_id: start });
          expect(await db.maxId('big')).toBe(start);
          expect((await call(b, 'GET', '/api/segment/get/big')).body).toBe(start);
        });

        it('refuses a duplicate (409 LEAF_TAG_EXISTS) and invalid input (400), writing nothing', async () => {
          await call(a, 'POST', '/admin/tags', {
            headers: AUTH,
            body: { biz_tag: 'dup', step: 5 },
          });
          await call(a, 'GET', '/api/segment/get/dup');
          const before = await db.maxId('dup');
          expectLeafError(
            await call(b, 'POST', '/admin/tags', {
              headers: AUTH,
              body: { biz_tag: 'dup', step: 9 },
            }),
            409,
            'LEAF_TAG_EXISTS',
          );
          expect(await db.maxId('dup')).toBe(before);
          for (const body of [
            { biz_tag: 'bad', step: 0 },
            { biz_tag: 'bad', step: -5 },
            { biz_tag: 'bad', step: 1.5 },
            { biz_tag: 'bad', step: 'ten' },
            { biz_tag: 'bad', step: 2 ** 31 },
            { biz_tag: 'bad', step: 1, max_id: '0' },
            { biz_tag: 'bad', step: 1, max_id: '9223372036854775808' },
            { biz_tag: 'bad', step: 1, max_id: 2 ** 60 },
            { biz_tag: 'bad bad', step: 1 },
            { step: 1 },
            { biz_tag: 'bad', step: 1, extra: true },
            [],
          ]) {
            const answer = await call(a, 'POST', '/admin/tags', { headers: AUTH, body });
            expectLeafError(answer, 400, 'LEAF_INVALID_ARGUMENT');
          }
          expect(await db.maxId('bad')).toBeNull();
        });

        it('changes step and description, never max_id; no delete route', async () => {
          await call(a, 'POST', '/admin/tags', {
            headers: AUTH,
            body: { biz_tag: 'tuned', step: 10 },
          });
          await call(a, 'GET', '/api/segment/get/tuned');
          const maxId = await db.maxId('tuned');
          const changed = await call(b, 'PATCH', '/admin/tags/tuned', {
            headers: AUTH,
            body: { step: 50, description: 'tuned' },
          });
          expect(changed.statusCode).toBe(200);
          expect(JSON.parse(changed.body)).toMatchObject({
            biz_tag: 'tuned',
            max_id: maxId,
            step: 50,
            description: 'tuned',
          });
          expect(await db.maxId('tuned')).toBe(maxId);
          expectLeafError(
            await call(a, 'PATCH', '/admin/tags/tuned', { headers: AUTH, body: { max_id: '1' } }),
            400,
            'LEAF_INVALID_ARGUMENT',
          );
          expectLeafError(
            await call(a, 'PATCH', '/admin/tags/tuned', { headers: AUTH, body: {} }),
            400,
            'LEAF_INVALID_ARGUMENT',
          );
          expectLeafError(
            await call(a, 'PATCH', '/admin/tags/ghost', { headers: AUTH, body: { step: 5 } }),
            404,
            'LEAF_TAG_NOT_FOUND',
          );
          expectLeafError(
            await call(a, 'DELETE', '/admin/tags/tuned', { headers: AUTH }),
            404,
            'LEAF_HTTP_404',
          );
          expect(await db.maxId('tuned')).toBe(maxId);
        });

        it("lists tags with their rows and this instance's buffer", async () => {
          const answer = await call(a, 'GET', '/admin/tags', { headers: AUTH });
          expect(answer.statusCode).toBe(200);
          const { tags } = JSON.parse(answer.body) as {
            tags: Array<{
              biz_tag: string;
              max_id: string;
              buffer: { initialized: boolean } | null;
            }>;
          };
          const orders = tags.find((t) => t.biz_tag === 'orders');
          expect(orders).toMatchObject({ max_id: '201', buffer: { initialized: true } });
          expect(tags.find((t) => t.biz_tag === 'leaf-segment-test')).toMatchObject({ buffer: {} });
          const one = await call(a, 'GET', '/admin/tags/orders', { headers: AUTH });
          expect(JSON.parse(one.body)).toMatchObject({ biz_tag: 'orders', max_id: '201' });
          expectLeafError(
            await call(a, 'GET', '/admin/tags/ghost', { headers: AUTH }),
            404,
            'LEAF_TAG_NOT_FOUND',
          );
        });
      });

      describe('unknown keys', () => {
        it('shares one database look-up among concurrent requests and caches "not found" for 5 s', async () => {
          const store = b.get<LeafAllocStore>(LEAF_ALLOC_STORE);
          const findTag = jest.spyOn(store, 'findTag');
          try {
            const answers = await Promise.all(
              Array.from({ length: 50 }, () => call(b, 'GET', '/api/segment/get/later')),
            );
            for (const answer of answers) expectLeafError(answer, 404, 'LEAF_TAG_NOT_FOUND');
            expect(findTag).toHaveBeenCalledTimes(1);
            // Created meanwhile on A: B keeps answering from its negative cache...
            await call(a, 'POST', '/admin/tags', {
              headers: AUTH,
              body: { biz_tag: 'later', step: 10 },
            });
            expectLeafError(
              await call(b, 'GET', '/api/segment/get/later'),
              404,
              'LEAF_TAG_NOT_FOUND',
            );
            expect(findTag).toHaveBeenCalledTimes(1);
            // ...until the entry expires.
            await new Promise((resolve) => setTimeout(resolve, 5100));
            expect((await call(b, 'GET', '/api/segment/get/later')).body).toBe('1');
            expect(findTag).toHaveBeenCalledTimes(2);
            // Random keys: one look-up each, then cached.
            const keys = Array.from({ length: 20 }, (_, i) => `random-${i}`);
            for (const key of [...keys, ...keys]) {
              expectLeafError(
                await call(b, 'GET', `/api/segment/get/${key}`),
                404,
                'LEAF_TAG_NOT_FOUND',
              );
            }
            expect(findTag).toHaveBeenCalledTimes(22);
          } finally {
            findTag.mockRestore();
          }
        });
      });

      describe('LEAF_MONITOR_PAGES', () => {
        it('open (default): /cache and /db answer without a token, in Leaf columns', async () => {
          const cache = await call(a, 'GET', '/cache');
          expect(cache.statusCode).toBe(200);
          expect(cache.body).toContain(
            '<tr><th>name</th><th>init</th><th>next</th><th>pos</th><th>value0</th><th>max0</th><th>step0</th><th>value1</th><th>max1</th><th>step1</th>',
          );
          expect((await call(a, 'GET', '/db')).statusCode).toBe(200);
        });

        it('token: 401 without the token, 200 with it', async () => {
          for (const page of ['/cache', '/db']) {
            expectLeafError(await call(b, 'GET', page), 401, 'LEAF_UNAUTHORIZED');
            expectLeafError(
              await call(b, 'GET', page, { headers: { authorization: 'Bearer wrong' } }),
              401,
              'LEAF_UNAUTHORIZED',
            );
            expect((await call(b, 'GET', page, { headers: AUTH })).statusCode).toBe(200);
          }
        });

        it('off: /cache and /db do not exist; the ID routes still serve', async () => {
          expectLeafError(await inject(plain, '/cache'), 404, 'LEAF_HTTP_404');
          expectLeafError(await inject(plain, '/db'), 404, 'LEAF_HTTP_404');
          expect((await inject(plain, '/api/segment/get/leaf-segment-test')).statusCode).toBe(200);
        });
      });
    },
  );
}
