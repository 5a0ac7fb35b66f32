/**
 * The ID formats over HTTP (docs/formats.md), the application built as `main.ts` builds it on
 * its bare-machine defaults (embedded SQLite, embedded worker ID): `?format=` on the segment
 * and snowflake ID routes (sequence mode's are the same code, `IdRoutes`), the UUIDv7 and
 * TypeID routes and the remote client's calls to them, `GET /api/decode/{text}`, and the 400s
 * and 404s around them. A bad format or prefix is refused before an ID is taken.
 */
import { join } from 'node:path';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { LeafErrorCode } from 'nestjs-leaf';
import {
  DEFAULT_SNOWFLAKE_EPOCH,
  SnowflakeLayout,
  decodeIdText,
  decodeUuidV7,
  isUuidV7,
  parseTypeId,
} from 'nestjs-leaf/formats';
import { LeafClient } from 'nestjs-leaf/client';
import { expectLeafError, inject, startApp, tempDir } from './support/app';
import { HttpClient } from './support/http-client';

const WORKER_ID = 7;
const layout = new SnowflakeLayout(DEFAULT_SNOWFLAKE_EPOCH);
const TAG = 'leaf-segment-test';

function expectIncreasing(texts: readonly string[]): void {
  for (let i = 1; i < texts.length; i++) {
    if (!(texts[i - 1]! < texts[i]!)) throw new Error(`not increasing at ${i}: ${texts[i]}`);
  }
}

describe('ID formats over HTTP (embedded SQLite, embedded worker ID)', () => {
  let dir: ReturnType<typeof tempDir>;
  let app: NestFastifyApplication;

  beforeAll(async () => {
    dir = tempDir('leaf-app-formats');
    app = await startApp(
      {
        LEAF_DB_URL: `sqlite:${join(dir.path, 'leaf.sqlite')}`,
        LEAF_STATE_DIR: dir.path,
        LEAF_WORKER_ID: String(WORKER_ID),
        LEAF_MAX_BATCH: '1000',
      },
      { listen: true },
    );
  });

  afterAll(async () => {
    await app?.close();
    dir?.remove();
  });

  const get = (url: string) => inject(app, url);
  const json = async <T>(url: string): Promise<T> => {
    const answer = await get(url);
    expect({ url, status: answer.statusCode }).toEqual({ url, status: 200 });
    return JSON.parse(answer.body) as T;
  };

  it('?format= writes segment IDs in each form; without it, decimal as before', async () => {
    const decimal = BigInt((await get(`/api/segment/get/${TAG}`)).body);
    const texts: Array<[string, 'base62' | 'base36' | 'base32']> = [];
    for (const form of ['base62', 'base36', 'base32'] as const) {
      const answer = await get(`/api/segment/get/${TAG}?format=${form}`);
      expect(answer.statusCode).toBe(200);
      expect(answer.headers['content-type']).toBe('text/plain; charset=utf-8');
      texts.push([answer.body, form]);
    }
    expect(texts.map(([text]) => text.length)).toEqual([11, 13, 13]);
    expect(texts.map(([text, form]) => decodeIdText(text, form))).toEqual([
      decimal + 1n,
      decimal + 2n,
      decimal + 3n,
    ]);
    const batch = await json<{ key: string; ids: string[] }>(
      `/api/segment/ids/${TAG}?count=300&format=base62`,
    );
    expect(batch.key).toBe(TAG);
    expectIncreasing(batch.ids);
    expect(batch.ids.map((text) => decodeIdText(text, 'base62'))).toEqual(
      Array.from({ length: 300 }, (_, i) => decimal + 4n + BigInt(i)),
    );
  });

  it('refuses an unknown format with 400 before taking an ID', async () => {
    const before = BigInt((await get(`/api/segment/get/${TAG}`)).body);
    for (const url of [
      `/api/segment/get/${TAG}?format=hex`,
      `/api/segment/ids/${TAG}?count=2&format=BASE62`,
      `/api/snowflake/get/k?format=decimal`,
      `/api/snowflake/ids/k?count=2&format=`,
    ]) {
      const body = expectLeafError(await get(url), 400, LeafErrorCode.INVALID_ARGUMENT);
      expect(body.message).toContain('format');
    }
    expect(BigInt((await get(`/api/segment/get/${TAG}`)).body)).toBe(before + 1n);
  });

  it('?format= writes snowflake IDs, in the order of the numbers', async () => {
    const one = (await get('/api/snowflake/get/k?format=base32')).body;
    const { ids } = await json<{ ids: string[] }>('/api/snowflake/ids/k?count=500&format=base32');
    const all = [one, ...ids];
    expectIncreasing(all);
    for (const text of all) expect(layout.decode(decodeIdText(text, 'base32')).workerId).toBe(7);
  });

  it('issues UUIDv7 and TypeIDs made from snowflake IDs, increasing, with the worker ID in them', async () => {
    const first = await get('/api/snowflake/uuid/order');
    expect(first.statusCode).toBe(200);
    expect(first.headers['content-type']).toBe('text/plain; charset=utf-8');
    const { key, uuids } = await json<{ key: string; uuids: string[] }>(
      '/api/snowflake/uuids/order?count=1000',
    );
    expect(key).toBe('order');
    const typed = await get('/api/snowflake/typeid/order');
    const batch = await json<{ prefix: string; typeIds: string[] }>(
      '/api/snowflake/typeids/order?count=200',
    );
    expect(batch.prefix).toBe('order');
    const all = [first.body, ...uuids];
    expectIncreasing(all);
    for (const uuid of all) {
      expect(isUuidV7(uuid)).toBe(true);
      expect(decodeUuidV7(uuid, layout).workerId).toBe(WORKER_ID);
    }
    const typeIds = [typed.body, ...batch.typeIds];
    expectIncreasing(typeIds);
    const parsed = typeIds.map(parseTypeId);
    expect(parsed.every(({ prefix }) => prefix === 'order')).toBe(true);
    expect(parsed[0]!.uuid > all[all.length - 1]!).toBe(true);
    // Without a prefix: the 26 characters alone.
    expect((await get('/api/snowflake/typeid')).body).toMatch(/^[0-7][0-9a-hjkmnp-tv-z]{25}$/);
    const none = await json<{ prefix: string; typeIds: string[] }>(
      '/api/snowflake/typeids?count=2',
    );
    expect(none.prefix).toBe('');
    expect(none.typeIds.every((t) => /^[0-7][0-9a-hjkmnp-tv-z]{25}$/.test(t))).toBe(true);
  });

  it('answers 400 for a bad prefix, key or count', async () => {
    for (const url of [
      '/api/snowflake/typeid/Order',
      '/api/snowflake/typeid/order_',
      `/api/snowflake/typeid/${'a'.repeat(64)}`,
      '/api/snowflake/typeids/order?count=0',
      '/api/snowflake/uuid/bad%20key',
      '/api/snowflake/uuid/',
      '/api/snowflake/uuids/?count=1',
      '/api/snowflake/uuids/k?count=1001',
      '/api/snowflake/uuids/k',
    ]) {
      expectLeafError(await get(url), 400, LeafErrorCode.INVALID_ARGUMENT);
    }
  });

  it('GET /api/decode/{text}: what each form encodes', async () => {
    const id = BigInt((await get('/api/snowflake/get/k')).body);
    const base62 = (await get('/api/snowflake/get/k?format=base62')).body;
    const uuid = (await get('/api/snowflake/uuid/k')).body;
    const typeId = (await get('/api/snowflake/typeid/user')).body;
    const fields = {
      timestamp: expect.any(Number),
      isoDate: expect.any(String),
      dataCenterId: 0,
      workerId: WORKER_ID,
      sequence: expect.any(Number),
    };

    expect(await json(`/api/decode/${id}`)).toEqual({
      text: String(id),
      format: 'decimal',
      id: String(id),
      uuid: null,
      prefix: null,
      fields: null,
    });
    const decoded = await json<{ fields: { timestamp: number; isoDate: string } }>(
      `/api/decode/${id}?mode=snowflake`,
    );
    expect(decoded).toMatchObject({ format: 'decimal', id: String(id), fields });
    expect(decoded.fields.timestamp).toBe(layout.decode(id).timestamp);
    expect(decoded.fields.isoDate).toBe(layout.decode(id).date.toISOString());
    expect(await json(`/api/decode/${base62}?mode=snowflake`)).toMatchObject({
      format: 'base62',
      id: String(decodeIdText(base62, 'base62')),
      fields,
    });
    const fromUuid = await json<{ id: string; fields: { sequence: number } }>(
      `/api/decode/${uuid}`,
    );
    expect(fromUuid).toMatchObject({ format: 'uuid', uuid, prefix: null, fields });
    expect(layout.decode(BigInt(fromUuid.id))).toMatchObject({
      workerId: WORKER_ID,
      sequence: fromUuid.fields.sequence,
    });
    expect(await json(`/api/decode/${typeId}`)).toMatchObject({
      format: 'typeid',
      prefix: 'user',
      uuid: parseTypeId(typeId).uuid,
      fields: { workerId: WORKER_ID },
    });
    // A digits-only fixed-width text is read as the format named.
    expect(await json('/api/decode/0000000000010?format=base36')).toMatchObject({ id: '36' });
  });

  it('GET /api/decode/{text}: 400 for an unknown format or mode, an unreadable or ambiguous text', async () => {
    for (const [url, argument] of [
      ['/api/decode/123?format=hex', 'format'],
      ['/api/decode/123?mode=random', 'mode'],
      ['/api/decode/0000000000010', 'format'],
      ['/api/decode/not-an-id', 'format'],
      ['/api/decode/', 'text'],
      ['/api/decode/00000000000?format=base62', 'text'],
      ['/api/decode/019b76da-a923-4abc-aa50-000000000000', 'uuid'],
    ] as const) {
      const body = expectLeafError(await get(url), 400, LeafErrorCode.INVALID_ARGUMENT);
      expect({ url, message: body.message }).toEqual({
        url,
        message: expect.stringContaining(argument),
      });
    }
  });

  it('the remote client takes UUIDv7 and TypeIDs from the server', async () => {
    const client = new LeafClient({ servers: [HttpClient.baseUrlOf(app)] });
    try {
      const uuids = await client.getTexts('snowflake', 'order', 100, 'uuid');
      expectIncreasing(uuids);
      expect(uuids.every((uuid) => decodeUuidV7(uuid, layout).workerId === WORKER_ID)).toBe(true);
      const typeIds = await client.getTexts('snowflake', 'k', 10, 'typeid', { prefix: 'user' });
      expectIncreasing(typeIds);
      expect(parseTypeId(typeIds[0]!).uuid > uuids[99]!).toBe(true);
      await expect(
        client.getTexts('snowflake', 'k', 1, 'typeid', { prefix: 'User' }),
      ).rejects.toMatchObject({
        code: LeafErrorCode.INVALID_ARGUMENT,
      });
    } finally {
      await client.close();
    }
  });

  it('documents the new routes and the format parameter in the OpenAPI document', async () => {
    const doc = await json<{
      paths: Record<string, { get: { parameters?: Array<{ name: string }> } }>;
    }>('/docs-json');
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining([
        '/api/snowflake/uuid/{key}',
        '/api/snowflake/uuids/{key}',
        '/api/snowflake/typeid/{prefix}',
        '/api/snowflake/typeids/{prefix}',
        '/api/decode/{text}',
      ]),
    );
    for (const path of ['/api/segment/get/{key}', '/api/snowflake/ids/{key}']) {
      expect(doc.paths[path]!.get.parameters!.map((p) => p.name)).toContain('format');
    }
  });
});

describe('ID formats with snowflake mode off', () => {
  let dir: ReturnType<typeof tempDir>;
  let app: NestFastifyApplication;

  beforeAll(async () => {
    dir = tempDir('leaf-app-formats-off');
    app = await startApp({
      LEAF_DB_URL: `sqlite:${join(dir.path, 'leaf.sqlite')}`,
      LEAF_STATE_DIR: dir.path,
      LEAF_SNOWFLAKE_ENABLED: 'false',
    });
  });

  afterAll(async () => {
    await app?.close();
    dir?.remove();
  });

  it('answers 404 LEAF_MODE_DISABLED for UUIDv7 and TypeID, still decodes a number', async () => {
    for (const url of [
      '/api/snowflake/uuid/k',
      '/api/snowflake/typeids/user?count=2',
      '/api/decode/019b76da-a923-7abc-aa50-000000000000',
      '/api/decode/2XChFHRNNRr?mode=snowflake',
    ]) {
      expectLeafError(await inject(app, url), 404, LeafErrorCode.MODE_DISABLED);
    }
    const answer = await inject(app, '/api/decode/2XChFHRNNRr');
    expect(answer.statusCode).toBe(200);
    expect(JSON.parse(answer.body)).toMatchObject({
      format: 'base62',
      id: '2128094966440788019',
      fields: null,
    });
  });
});
