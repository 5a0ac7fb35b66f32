/**
 * Opaque public IDs through the application (docs/public-ids.md), on its bare-machine defaults
 * (embedded SQLite, embedded worker ID): `?format=opaque` on the ID routes of segment and
 * snowflake mode under concurrent requests, a key rotation by restart (a key appended): every
 * ID issued before and after reads back through `GET /api/decode/{text}` and `GET /admin/ids`,
 * none twice; then the old key retired (410), and no key at all (404, with the reason).
 */
import { join } from 'node:path';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { LeafErrorCode } from 'nestjs-leaf';
import { OpaqueIds } from 'nestjs-leaf/formats';
import { expectLeafError, inject, startApp, tempDir } from './support/app';

const TAG = 'leaf-segment-test';
const K1 = Buffer.alloc(16, 0x11).toString('base64');
const K2 = Buffer.alloc(32, 0x22).toString('base64');
const ADMIN = 'opaque-admin-token-0123456789';

describe('opaque IDs over HTTP: a key rotation by restart', () => {
  let dir: ReturnType<typeof tempDir>;
  let app: NestFastifyApplication | undefined;

  beforeAll(() => {
    dir = tempDir('leaf-app-opaque');
  });

  afterAll(async () => {
    await app?.close();
    dir?.remove();
  });

  const start = async (keys: string | null) => {
    await app?.close();
    app = await startApp({
      LEAF_DB_URL: `sqlite:${join(dir.path, 'leaf.sqlite')}`,
      LEAF_STATE_DIR: dir.path,
      LEAF_WORKER_ID: '3',
      LEAF_ADMIN_TOKEN: ADMIN,
      ...(keys === null ? {} : { LEAF_OPAQUE_KEYS: keys }),
    });
  };
  const get = (url: string) => inject(app!, url);

  /** 20 concurrent batches and single IDs of both modes, as opaque texts. */
  async function issue(): Promise<{ segment: string[]; snowflake: string[] }> {
    const batches = await Promise.all(
      Array.from({ length: 20 }, async (_, i) => {
        const mode = i % 2 === 0 ? 'segment' : 'snowflake';
        const [batch, one] = await Promise.all([
          get(`/api/${mode}/ids/${TAG}?count=50&format=opaque`),
          get(`/api/${mode}/get/${TAG}?format=opaque`),
        ]);
        expect([batch.statusCode, one.statusCode]).toEqual([200, 200]);
        return { mode, texts: [...(JSON.parse(batch.body) as { ids: string[] }).ids, one.body] };
      }),
    );
    const of = (mode: string) => batches.filter((b) => b.mode === mode).flatMap((b) => b.texts);
    return { segment: of('segment'), snowflake: of('snowflake') };
  }

  /** What the decode route reads each text to (the number, decimal). */
  async function decodeAll(texts: readonly string[]): Promise<string[]> {
    return Promise.all(
      texts.map(async (text) => {
        const answer = await get(`/api/decode/${text}`);
        expect({ text, status: answer.statusCode }).toEqual({ text, status: 200 });
        const body = JSON.parse(answer.body) as { format: string; id: string };
        expect(body.format).toBe('opaque');
        return body.id;
      }),
    );
  }

  it('issues with the newest key; every ID before and after the rotation reads, none twice', async () => {
    await start(`v1:${K1}`);
    const before = await issue();
    await start(`v1:${K1},v2:${K2}`); // rotation: v2 appended, so it writes
    const after = await issue();

    const all = [...before.segment, ...before.snowflake, ...after.segment, ...after.snowflake];
    expect(new Set(all).size).toBe(all.length);
    expect([...before.segment, ...before.snowflake].every((t) => t.startsWith('A'))).toBe(true);
    expect([...after.segment, ...after.snowflake].every((t) => t.startsWith('B'))).toBe(true);

    // Read back by the server (both versions), and by the library with the same keys.
    const ring = OpaqueIds.fromEntries([`v1:${K1}`, `v2:${K2}`]);
    for (const mode of ['segment', 'snowflake'] as const) {
      const texts = [...before[mode], ...after[mode]];
      const ids = await decodeAll(texts);
      expect(ids).toEqual(ring.decodeAll(texts).map(String));
      expect(new Set(ids).size).toBe(ids.length); // none twice
      expect(ids.every((id) => /^[1-9][0-9]*$/.test(id))).toBe(true);
    }
    // Segment IDs after the restart come from a later range.
    const segmentIds = (await decodeAll([...before.segment, ...after.segment])).map(BigInt);
    const firstAfter = segmentIds.slice(before.segment.length);
    const lastBefore = segmentIds.slice(0, before.segment.length);
    expect(firstAfter.every((id) => lastBefore.every((old) => id > old))).toBe(true);

    // The snowflake fields of an opaque snowflake ID, and the admin API reads it too.
    const fields = JSON.parse((await get(`/api/decode/${after.snowflake[0]}?mode=snowflake`)).body)
      .fields as { workerId: number };
    expect(fields.workerId).toBe(3);
    const whois = await inject(app!, `/admin/ids/${before.segment[0]}?mode=segment&tag=${TAG}`, {
      headers: { authorization: `Bearer ${ADMIN}` },
    });
    expect(whois.statusCode).toBe(200);
    expect(JSON.parse(whois.body)).toMatchObject({
      id: ring.decode(before.segment[0]!).toString(),
      tag: TAG,
    });

    // v1 retired: its IDs are refused with 410, v2's still read.
    await start(`v2:${K2}`);
    expectLeafError(
      await get(`/api/decode/${before.segment[0]}`),
      410,
      LeafErrorCode.OPAQUE_KEY_RETIRED,
    );
    expect((await get(`/api/decode/${after.segment[0]}`)).statusCode).toBe(200);
  });

  it('opaque UUIDs of snowflake IDs: read back to the UUIDv7 and the ID, refused for segment', async () => {
    await start(`v1:${K1}`);
    const answer = await get(`/api/snowflake/ids/${TAG}?count=100&format=opaque-uuid`);
    expect(`${answer.statusCode} ${answer.body}`).toMatch(/^200 /);
    const texts = (JSON.parse(answer.body) as { ids: string[] }).ids;
    expect(new Set(texts).size).toBe(100);
    const ring = OpaqueIds.fromEntries([`v1:${K1}`]);
    const uuids = ring.decodeUuids(texts);
    const decoded = await Promise.all(
      texts.map(async (text) => JSON.parse((await get(`/api/decode/${text}`)).body)),
    );
    expect(decoded.map((d: { uuid: string }) => d.uuid)).toEqual(uuids);
    expect(decoded.every((d: { format: string }) => d.format === 'opaque-uuid')).toBe(true);
    const ids = decoded.map((d: { id: string }) => BigInt(d.id));
    expect(ids.every((id, i) => i === 0 || id > ids[i - 1]!)).toBe(true);
    expect(decoded.every((d: { fields: { workerId: number } }) => d.fields.workerId === 3)).toBe(
      true,
    );
    const first = BigInt((await get(`/api/segment/get/${TAG}`)).body);
    expectLeafError(
      await get(`/api/segment/ids/${TAG}?count=3&format=opaque-uuid`),
      400,
      LeafErrorCode.INVALID_ARGUMENT,
    );
    expect(BigInt((await get(`/api/segment/get/${TAG}`)).body)).toBe(first + 1n);
  });

  it('without a key, the format is refused with the reason, before an ID is taken', async () => {
    await start(null);
    const first = BigInt((await get(`/api/segment/get/${TAG}`)).body);
    const refused = expectLeafError(
      await get(`/api/segment/get/${TAG}?format=opaque`),
      404,
      LeafErrorCode.OPAQUE_DISABLED,
    );
    expect(refused.message).toMatch(/LEAF_OPAQUE_KEYS/);
    expectLeafError(await get(`/api/decode/B0000000000A`), 404, LeafErrorCode.OPAQUE_DISABLED);
    expect(BigInt((await get(`/api/segment/get/${TAG}`)).body)).toBe(first + 1n);
  });
});
