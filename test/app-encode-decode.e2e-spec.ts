/**
 * `IdService.encode` / `decode` in process and through the remote client (docs/public-ids.md):
 * `GET /api/encode/{format}?ids=` writes IDs issued earlier (opaque under the key ring, the
 * number forms), `GET /api/decode/{text}` reads any form back; a service without the keys
 * (`LeafClient`) gets the same answers, hostile input is refused before anything, and the
 * refusals arrive as the library's error classes.
 */
import { join } from 'node:path';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { IdService, LeafErrorCode } from 'nestjs-leaf';
import {
  InvalidArgumentError,
  OpaqueDisabledError,
  OpaqueKeyRetiredError,
} from 'nestjs-leaf/errors';
import { LeafClient } from 'nestjs-leaf/client';
import { OpaqueIds } from 'nestjs-leaf/formats';
import { expectLeafError, inject, startApp, tempDir } from './support/app';
import { HttpClient } from './support/http-client';

const TAG = 'leaf-segment-test';
const K1 = Buffer.alloc(16, 0x31).toString('base64');
const K2 = Buffer.alloc(16, 0x32).toString('base64');

describe('encode and decode: in process, over HTTP, through LeafClient', () => {
  let dir: ReturnType<typeof tempDir>;
  let app: NestFastifyApplication | undefined;
  let client: LeafClient | undefined;

  beforeAll(() => {
    dir = tempDir('leaf-app-encode');
  });

  afterAll(async () => {
    await client?.close();
    await app?.close();
    dir?.remove();
  });

  const start = async (keys: string | null) => {
    await client?.close();
    await app?.close();
    app = await startApp(
      {
        LEAF_DB_URL: `sqlite:${join(dir.path, 'leaf.sqlite')}`,
        LEAF_STATE_DIR: dir.path,
        LEAF_WORKER_ID: '4',
        ...(keys === null ? {} : { LEAF_OPAQUE_KEYS: keys }),
      },
      { listen: true },
    );
    client = new LeafClient({ servers: [HttpClient.baseUrlOf(app)] });
  };

  it('writes issued IDs as opaque texts and reads them back, the same in process and remotely', async () => {
    await start(`v1:${K1},v2:${K2}`);
    const local = app!.get(IdService);
    const ids = await local.getIds('segment', TAG, 5);
    const [snowflakeId] = await local.getIds('snowflake', TAG, 1);
    const all = [...ids, snowflakeId!];

    const texts = await local.encode(all, 'opaque');
    expect(await client!.encode(all, 'opaque')).toEqual(texts);
    expect(OpaqueIds.fromEntries([`v1:${K1}`, `v2:${K2}`]).decodeAll(texts)).toEqual(all);
    expect(await client!.encode(all, 'base62')).toEqual(await local.encode(all, 'base62'));
    // A full request: 500 IDs of 19 digits fit the request's head (Node's 16 KiB).
    const full = Array.from({ length: 500 }, (_, i) => 9_000_000_000_000_000_000n + BigInt(i));
    expect(await client!.encode(full, 'opaque')).toEqual(await local.encode(full, 'opaque'));
    await expect(client!.encode([...full, 1n], 'opaque')).rejects.toBeInstanceOf(
      InvalidArgumentError,
    );

    for (const [i, text] of texts.entries()) {
      const remote = await client!.decode(text);
      expect(remote).toEqual(await local.decode(text));
      expect(remote).toMatchObject({ format: 'opaque', id: all[i], uuid: null });
    }
    // A snowflake ID's fields, asked for; a UUIDv7's always.
    const fields = (await client!.decode(texts.at(-1)!, { mode: 'snowflake' })).fields;
    expect(fields).toMatchObject({ workerId: 4 });
    expect(fields!.date).toBeInstanceOf(Date);
    const [uuid] = await client!.getTexts('snowflake', TAG, 1, 'uuid');
    expect(await client!.decode(uuid!)).toMatchObject({ format: 'uuid', uuid });

    // An opaque UUID read back remotely to its UUIDv7 and ID.
    const [opaqueUuid] = await client!.getTexts('snowflake', TAG, 1, 'opaque-uuid');
    const decoded = await client!.decode(opaqueUuid!);
    expect(decoded).toMatchObject({ format: 'opaque-uuid', fields: { workerId: 4 } });
    expect(typeof decoded.id).toBe('bigint');
  });

  it('refuses hostile or impossible input before anything, with the library classes', async () => {
    await start(`v2:${K2}`);
    const bad = [
      '/api/encode/opaque?ids=0',
      '/api/encode/opaque?ids=-1',
      '/api/encode/opaque?ids=1,,2',
      '/api/encode/opaque?ids=9223372036854775808',
      '/api/encode/opaque?ids=01',
      `/api/encode/opaque?ids=${Array.from({ length: 1001 }, (_, i) => i + 1).join(',')}`,
      '/api/encode/opaque',
      '/api/encode/uuid?ids=1',
      '/api/encode/opaque-uuid?ids=1',
      '/api/encode/%00?ids=1',
    ];
    for (const url of bad)
      expectLeafError(await inject(app!, url), 400, LeafErrorCode.INVALID_ARGUMENT);

    await expect(client!.encode([0n], 'opaque')).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(client!.encode([1n], 'uuid')).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(client!.decode('\u0000')).rejects.toBeInstanceOf(InvalidArgumentError);
    // Written with v1, which this ring no longer lists: 410 on the server, the class here.
    const old = new OpaqueIds([{ version: 1, key: Buffer.from(K1, 'base64') }]).encode(42n);
    await expect(client!.decode(old)).rejects.toBeInstanceOf(OpaqueKeyRetiredError);
    await expect(client!.decode(old)).rejects.toMatchObject({ version: 1 });

    await start(null);
    expectLeafError(
      await inject(app!, '/api/encode/opaque?ids=1'),
      404,
      LeafErrorCode.OPAQUE_DISABLED,
    );
    await expect(client!.encode([1n], 'opaque')).rejects.toBeInstanceOf(OpaqueDisabledError);
    expect(await client!.encode([1n, 62n], 'base62')).toEqual(['00000000001', '00000000010']);
  });
});
