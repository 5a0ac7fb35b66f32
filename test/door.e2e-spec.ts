/**
 * At the door (docs/security.md, "At the door"), on MariaDB and on PostgreSQL, against the app
 * started by environment (segment, sequence and business numbers, admin token set):
 *
 * - every key, tag and description a caller can send (a NUL byte, control characters, invalid
 *   UTF-8, a lone surrogate, too long) is answered 400 `LEAF_INVALID_ARGUMENT` on every public
 *   and admin route, with no database text, and `leaf_alloc` and `leaf_number_format` are
 *   unchanged;
 * - a refused range (`after` above every ID) allocates nothing;
 * - a tag with a business-number format, and its period counter rows, are refused by the ID
 *   routes (409 `LEAF_TAG_RESERVED`) and still served as numbers;
 * - format definitions as documented: `width` a JSON number, `time_zone` an IANA name; a
 *   number whose counter is 0 is not one.
 */
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { LeafErrorCode } from 'nestjs-leaf';
import {
  expectLeafError,
  type InjectedAnswer,
  startSelfAdvertisingApp,
  tempDir,
} from './support/app';
import { BAD_KEY_TEXTS, BAD_KEYS, BAD_TEXTS, DATABASE_TEXT } from './support/bad-input';
import { SERVER_FLAVOURS, type ServerTestDatabase } from './support/server-databases';
import { describeWithServices } from './support/services';

jest.setTimeout(120_000);

const TOKEN = 'e2e-door-admin-token-0123456789abcdef';
const MAX_INT64 = '9223372036854775807';

/** One request: method, URL (already encoded) and an optional JSON body. */
interface Call {
  readonly method: 'GET' | 'POST' | 'PATCH';
  readonly url: string;
  readonly body?: unknown;
}

async function send(app: NestFastifyApplication, call: Call): Promise<InjectedAnswer> {
  const res = await app
    .getHttpAdapter()
    .getInstance()
    .inject({
      method: call.method,
      url: call.url,
      headers: {
        authorization: `Bearer ${TOKEN}`,
        ...(call.body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      ...(call.body !== undefined ? { payload: JSON.stringify(call.body) } : {}),
    });
  return { statusCode: res.statusCode, headers: res.headers, body: res.body };
}

/** Every route that takes a key or tag in its path, for `key` (already %-encoded). */
function keyedCalls(key: string): Array<[string, Call]> {
  return [
    ['segment get', { method: 'GET', url: `/api/segment/get/${key}` }],
    ['segment ids', { method: 'GET', url: `/api/segment/ids/${key}?count=2` }],
    ['segment range', { method: 'GET', url: `/api/segment/range/${key}?count=2` }],
    ['sequence get', { method: 'GET', url: `/api/sequence/get/${key}` }],
    ['sequence ids', { method: 'GET', url: `/api/sequence/ids/${key}?count=2` }],
    ['segment number', { method: 'GET', url: `/api/segment/number/${key}` }],
    ['segment numbers', { method: 'GET', url: `/api/segment/numbers/${key}?count=2` }],
    ['sequence number', { method: 'GET', url: `/api/sequence/number/${key}` }],
    ['sequence numbers', { method: 'GET', url: `/api/sequence/numbers/${key}?count=2` }],
    ['number decode', { method: 'GET', url: `/api/number/decode/${key}?number=SN-000001` }],
    ['admin tag', { method: 'GET', url: `/admin/tags/${key}` }],
    ['admin tag change', { method: 'PATCH', url: `/admin/tags/${key}`, body: { step: 20 } }],
    ['admin format', { method: 'GET', url: `/admin/formats/${key}` }],
    [
      'admin format change',
      { method: 'PATCH', url: `/admin/formats/${key}`, body: { description: 'x' } },
    ],
  ];
}

for (const flavour of SERVER_FLAVOURS) {
  describeWithServices([flavour.service], `at the door on ${flavour.label}`, () => {
    let db: ServerTestDatabase;
    let state: ReturnType<typeof tempDir>;
    let app: NestFastifyApplication;
    const text = flavour.service === 'postgres' ? 'text' : 'CHAR';

    /**
     * `leaf_alloc` and `leaf_number_format` as text: nothing a refused request does may change
     * them. Read once the background preloads an earlier call may have started are done.
     */
    const tables = async (): Promise<string> => {
      await new Promise((resolve) => setTimeout(resolve, 300));
      return JSON.stringify([
        await db.query(
          `SELECT biz_tag, CAST(max_id AS ${text}) AS max_id, step, description FROM leaf_alloc ORDER BY biz_tag`,
        ),
        await db.query(
          'SELECT biz_tag, prefix, counter_width, time_zone, description FROM leaf_number_format ORDER BY biz_tag',
        ),
      ]);
    };

    /** Sends `call` and checks the answer is 400 `LEAF_INVALID_ARGUMENT` without database text. */
    const expectRefused = async (call: Call): Promise<void> => {
      const answer = await send(app, call);
      expect({ call, status: answer.statusCode, body: answer.body }).toEqual({
        call,
        status: 400,
        body: expect.stringContaining(LeafErrorCode.INVALID_ARGUMENT),
      });
      expectLeafError(answer, 400, LeafErrorCode.INVALID_ARGUMENT);
      expect(answer.body).not.toMatch(DATABASE_TEXT);
    };

    beforeAll(async () => {
      db = await flavour.create({ migrate: true });
      state = tempDir('leaf-door');
      app = await startSelfAdvertisingApp({
        LEAF_DB_URL: db.url,
        LEAF_SNOWFLAKE_ENABLED: 'false',
        LEAF_STATE_DIR: state.path,
        LEAF_NAME: `door${Date.now().toString(36)}`,
        LEAF_ADMIN_TOKEN: TOKEN,
      });
      for (const tag of ['door', 'sn', 'orders', 'seqn']) {
        expect(
          (
            await send(app, {
              method: 'POST',
              url: '/admin/tags',
              body: { biz_tag: tag, step: 10 },
            })
          ).statusCode,
        ).toBe(201);
      }
      for (const format of [
        { biz_tag: 'sn', prefix: 'SN', width: 6 },
        { biz_tag: 'orders', prefix: 'ORD', date_pattern: 'yyyyMMdd', width: 6 },
        { biz_tag: 'seqn', prefix: 'Q', width: 6, mode: 'sequence' },
      ]) {
        expect(
          (await send(app, { method: 'POST', url: '/admin/formats', body: format })).statusCode,
        ).toBe(201);
      }
    });

    afterAll(async () => {
      await app?.close();
      await db?.drop();
      state?.remove();
    });

    it('answers every malformed key, tag and description 400 LEAF_INVALID_ARGUMENT on every route, changing nothing', async () => {
      const before = await tables();
      for (const [, key] of BAD_KEYS) {
        for (const [, call] of keyedCalls(key)) await expectRefused(call);
      }
      for (const [, key] of BAD_KEY_TEXTS) {
        await expectRefused({
          method: 'POST',
          url: '/admin/tags',
          body: { biz_tag: key, step: 10 },
        });
        await expectRefused({
          method: 'POST',
          url: '/admin/formats',
          body: { biz_tag: key, width: 6 },
        });
      }
      for (const [, description] of BAD_TEXTS) {
        for (const call of [
          { method: 'PATCH', url: '/admin/tags/door', body: { description } },
          { method: 'POST', url: '/admin/tags', body: { biz_tag: 'fresh', step: 10, description } },
          { method: 'PATCH', url: '/admin/formats/sn', body: { description } },
          {
            method: 'POST',
            url: '/admin/formats',
            body: { biz_tag: 'door', width: 6, description },
          },
        ] as Call[]) {
          await expectRefused(call);
        }
      }
      for (const number of [
        'SN-%00',
        'SN-00000%01',
        `SN-${'1'.repeat(300)}`,
        '%ED%A0%80',
        'SN-%C2%85',
      ]) {
        await expectRefused({ method: 'GET', url: `/api/number/decode/sn?number=${number}` });
      }
      expect(await tables()).toBe(before);
    });

    it('allocates nothing for a range it refuses (after above every ID)', async () => {
      // A first range puts a buffer in memory, so the refusal is not a missing one.
      expect(
        (await send(app, { method: 'GET', url: '/api/segment/range/door?count=5' })).statusCode,
      ).toBe(200);
      const maxId = await db.maxId('door');
      for (const after of [MAX_INT64, (BigInt(maxId!) + 1n).toString()]) {
        expectLeafError(
          await send(app, {
            method: 'GET',
            url: `/api/segment/range/door?count=1000000&after=${after}`,
          }),
          400,
          LeafErrorCode.INVALID_ARGUMENT,
        );
        expect(await db.maxId('door')).toBe(maxId);
      }
      // An `after` the row has reached is served.
      const served = await send(app, {
        method: 'GET',
        url: `/api/segment/range/door?count=3&after=${maxId}`,
      });
      expect(served.statusCode).toBe(200);
      expect(BigInt((JSON.parse(served.body) as { start: string }).start)).toBeGreaterThanOrEqual(
        BigInt(maxId!),
      );
    });

    it('serves a tag with a business-number format only as numbers (409 LEAF_TAG_RESERVED on the ID routes)', async () => {
      expect((await send(app, { method: 'GET', url: '/api/segment/number/sn' })).body).toBe(
        'SN-000001',
      );
      const format = JSON.parse(
        (await send(app, { method: 'GET', url: '/admin/formats/orders' })).body,
      ) as {
        counter_tag: string;
      };
      expect(format.counter_tag).toMatch(/^orders:\d{8}$/);
      expect(
        (await send(app, { method: 'GET', url: '/api/segment/number/orders' })).statusCode,
      ).toBe(200);
      const before = await tables();
      for (const tag of ['sn', 'orders', format.counter_tag, 'seqn']) {
        for (const url of [
          `/api/segment/range/${tag}?count=1000000`,
          `/api/segment/get/${tag}`,
          `/api/segment/ids/${tag}?count=10`,
          `/api/sequence/get/${tag}`,
          `/api/sequence/ids/${tag}?count=10`,
        ]) {
          const body = expectLeafError(
            await send(app, { method: 'GET', url }),
            409,
            'LEAF_TAG_RESERVED',
          );
          expect(body.message).toContain(tag);
        }
      }
      expect(await tables()).toBe(before);
      expect((await send(app, { method: 'GET', url: '/api/segment/number/sn' })).body).toBe(
        'SN-000002',
      );
      expect(
        (await send(app, { method: 'GET', url: '/api/sequence/number/seqn' })).statusCode,
      ).toBe(200);
      // An ordinary tag, and a tag merely shaped like a counter row, are served.
      expect((await send(app, { method: 'GET', url: '/api/segment/get/door' })).statusCode).toBe(
        200,
      );
    });

    it('checks format definitions as documented: width a JSON number, time_zone an IANA name', async () => {
      const before = await tables();
      for (const body of [
        { biz_tag: 'door', width: '6' },
        { biz_tag: 'door', width: 6.5 },
        { biz_tag: 'door', width: 6, time_zone: '+05:00' },
        { biz_tag: 'door', width: 6, time_zone: '-03' },
        { biz_tag: 'door', width: 6, time_zone: '+0530' },
        { biz_tag: 'door', width: 6, time_zone: 'Mars/Base' },
      ]) {
        await expectRefused({ method: 'POST', url: '/admin/formats', body });
      }
      await expectRefused({ method: 'PATCH', url: '/admin/formats/sn', body: { width: '7' } });
      expect(await tables()).toBe(before);
    });

    it('refuses to decode a number whose counter is 0 (never issued)', async () => {
      await expectRefused({ method: 'GET', url: '/api/number/decode/sn?number=SN-000000' });
      const decoded = await send(app, {
        method: 'GET',
        url: '/api/number/decode/sn?number=SN-000001',
      });
      expect(decoded.statusCode).toBe(200);
      expect(JSON.parse(decoded.body)).toEqual(expect.objectContaining({ counter: '1' }));
    });
  });
}
