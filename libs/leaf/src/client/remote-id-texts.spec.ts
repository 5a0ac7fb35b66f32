import { InvalidArgumentError } from '../core/errors/invalid-argument.error';
import { LeafErrorCode } from '../core/errors/leaf.error';
import { ShuttingDownError } from '../core/errors/shutting-down.error';
import { SnowflakeNotReadyError } from '../core/errors/snowflake-not-ready.error';
import { decodeIdText } from '../core/formats/id-text-forms';
import { SnowflakeUuidV7, isUuidV7 } from '../core/formats/snowflake-uuid-v7';
import { parseTypeId, typeIdFromUuid } from '../core/formats/type-id';
import { DEFAULT_SNOWFLAKE_EPOCH, SnowflakeLayout } from '../core/snowflake/snowflake-layout';
import type { LeafTransport, TransportAnswer } from '../core/http/leaf-transport.port';
import { LeafClient } from './leaf-client';
import { OpaqueIds } from '../core/formats/opaque-ids';
import { OpaqueDisabledError } from '../core/errors/opaque.error';

const layout = new SnowflakeLayout(DEFAULT_SNOWFLAKE_EPOCH);
const T0 = 1_767_225_600_000;

/** Servers answering the UUIDv7 and TypeID routes as the application does, each its own worker. */
class UuidServers implements LeafTransport {
  readonly requests: string[] = [];
  /** Per server: 'serve', 'refuse', or 'garble' (a 200 whose body is not what was asked). */
  readonly behaviour = new Map<string, 'serve' | 'refuse' | 'garble' | 'keyless'>();
  private sequence = 0;
  private readonly uuids = new SnowflakeUuidV7(layout);

  async get(url: string): Promise<TransportAnswer> {
    this.requests.push(url);
    const parsed = new URL(url);
    const behaviour = this.behaviour.get(parsed.origin) ?? 'serve';
    if (behaviour === 'refuse') throw new Error('ECONNREFUSED');
    const worker = parsed.origin.includes('a.test') ? 1 : 2;
    const count = Number(parsed.searchParams.get('count'));
    const [, , , route, name = ''] = parsed.pathname.split('/');
    const uuids = Array.from({ length: count }, () =>
      this.uuids.fromId(layout.compose(T0, worker, this.sequence++)),
    );
    if (behaviour === 'garble') return { status: 200, body: JSON.stringify({ uuids: ['x'] }) };
    const format = parsed.searchParams.get('format');
    if (behaviour === 'keyless' && format !== null) {
      const { code, message } = new OpaqueDisabledError('no keys');
      return { status: 404, body: JSON.stringify({ statusCode: 404, code, message }) };
    }
    const ids = uuids.map((_, i) => BigInt(this.sequence - count + i + 1));
    const texts: Record<string, () => string[]> = {
      opaque: () => RING.encodeAll(ids),
      'opaque-uuid': () => RING.encodeUuids(uuids),
    };
    const bodies: Record<string, object> = {
      ids: { key: name, ids: format === null ? ids.map(String) : texts[format]!() },
      uuids: { key: name, uuids },
      typeids: { prefix: name, typeIds: uuids.map((uuid) => typeIdFromUuid(name, uuid)) },
    };
    const body = bodies[route!];
    return { status: 200, body: JSON.stringify(body) };
  }

  close(): void {}
}

/** The servers' key ring: the client holds none. */
const RING = new OpaqueIds([{ version: 2, key: Buffer.alloc(16, 5) }]);

const A = 'http://a.test:8080';
const B = 'http://b.test:8080';

function setup() {
  const servers = new UuidServers();
  const client = new LeafClient({ servers: [A, B], transport: servers, requestTimeoutMs: 50 });
  return { servers, client };
}

describe('LeafClient.getTexts: UUIDv7 and TypeIDs from the servers, numeric forms here', () => {
  it('asks the UUIDv7 and TypeID routes, one request per call, and checks the answers', async () => {
    const { servers, client } = setup();
    const uuids = await client.getTexts('snowflake', 'order', 3, 'uuid');
    expect(uuids).toHaveLength(3);
    expect(uuids.every(isUuidV7)).toBe(true);
    const typeIds = await client.getTexts('snowflake', 'k', 2, 'typeid', { prefix: 'user' });
    expect(typeIds.map((t) => parseTypeId(t).prefix)).toEqual(['user', 'user']);
    const bare = await client.getTexts('snowflake', 'k', 1, 'typeid');
    expect(bare[0]).toMatch(/^[0-7][0-9a-hjkmnp-tv-z]{25}$/);
    expect(servers.requests.map((url) => url.slice(A.length))).toEqual([
      '/api/snowflake/uuids/order?count=3',
      '/api/snowflake/typeids/user?count=2',
      '/api/snowflake/typeids?count=1',
    ]);
    await client.close();
  });

  it('writes a numeric form itself, from the IDs of the ID route', async () => {
    const { servers, client } = setup();
    const texts = await client.getTexts('sequence', 'order', 2, 'base36');
    expect(texts.map((text) => decodeIdText(text, 'base36'))).toEqual([1n, 2n]);
    expect(servers.requests.map((url) => url.slice(A.length))).toEqual([
      '/api/sequence/ids/order?count=2',
    ]);
    await client.close();
  });

  it('asks the servers for opaque IDs and opaque UUIDs (they hold the keys), typed refusals', async () => {
    const { servers, client } = setup();
    const opaque = await client.getTexts('segment', 'order', 2, 'opaque');
    expect(RING.decodeAll(opaque)).toEqual([1n, 2n]);
    const uuids = await client.getTexts('snowflake', 'order', 2, 'opaque-uuid');
    expect(RING.decodeUuids(uuids).every(isUuidV7)).toBe(true);
    expect(servers.requests.map((url) => url.slice(A.length))).toEqual([
      '/api/segment/ids/order?format=opaque&count=2',
      '/api/snowflake/ids/order?format=opaque-uuid&count=2',
    ]);
    servers.behaviour.set(A, 'keyless');
    servers.behaviour.set(B, 'keyless');
    await expect(client.getTexts('segment', 'order', 1, 'opaque')).rejects.toMatchObject({
      constructor: OpaqueDisabledError,
      reason: 'no keys',
    });
    await client.close();
  });

  it('fails over a server that refuses or answers something else, and says so when none can', async () => {
    const { servers, client } = setup();
    servers.behaviour.set(A, 'garble');
    const uuids = await client.getTexts('snowflake', 'order', 2, 'uuid');
    expect(layout.decode(new SnowflakeUuidV7(layout).toId(uuids[0]!)).workerId).toBe(2);
    servers.behaviour.set(B, 'refuse');
    await expect(client.getTexts('snowflake', 'order', 1, 'uuid')).rejects.toBeInstanceOf(
      SnowflakeNotReadyError,
    );
    await client.close();
  });

  it('checks key, prefix and count before sending anything, and refuses after close', async () => {
    const { servers, client } = setup();
    for (const call of [
      () => client.getTexts('snowflake', 'bad key', 1, 'uuid'),
      () => client.getTexts('snowflake', 'order', 0, 'uuid'),
      () => client.getTexts('segment', 'order', 1, 'uuid'),
      () => client.getTexts('snowflake', 'k', 1, 'typeid', { prefix: 'User' }),
      () => client.getTexts('snowflake', 'k', 1, 'typeid', { prefix: 'user_' }),
      () => client.getTexts('snowflake', 'k', 1001, 'typeid', { prefix: 'user' }),
      () => client.getTexts('snowflake', 'k', 1, 'hex' as never),
    ]) {
      await expect(call()).rejects.toMatchObject({ code: LeafErrorCode.INVALID_ARGUMENT });
      await expect(call()).rejects.toBeInstanceOf(InvalidArgumentError);
    }
    expect(servers.requests).toEqual([]);
    await client.close();
    await expect(client.getTexts('snowflake', 'order', 1, 'uuid')).rejects.toBeInstanceOf(
      ShuttingDownError,
    );
  });
});

describe('LeafClient.getTexts: opaque IDs from the servers, which hold the keys', () => {
  it("asks the mode's ID route with format=opaque, checks the shape, never needs a key", async () => {
    const { servers, client } = setup();
    const texts = await client.getTexts('segment', 'orders', 2, 'opaque');
    expect(servers.requests).toEqual([`${A}/api/segment/ids/orders?format=opaque&count=2`]);
    expect(RING.decodeAll(texts)).toEqual([1n, 2n]); // decoded where the keys are
    await client.getTexts('sequence', 'invoices', 1, 'opaque');
    expect(servers.requests[1]).toMatch(/\/api\/sequence\/ids\/invoices\?format=opaque&count=1$/);
    await client.close();
  });
});
