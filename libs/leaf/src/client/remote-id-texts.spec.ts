import { InvalidArgumentError } from '../core/errors/invalid-argument.error';
import { LeafErrorCode } from '../core/errors/leaf.error';
import { ShuttingDownError } from '../core/errors/shutting-down.error';
import { SnowflakeNotReadyError } from '../core/errors/snowflake-not-ready.error';
import { SnowflakeUuidV7, isUuidV7 } from '../core/formats/snowflake-uuid-v7';
import { parseTypeId, typeIdFromUuid } from '../core/formats/type-id';
import { DEFAULT_SNOWFLAKE_EPOCH, SnowflakeLayout } from '../core/snowflake/snowflake-layout';
import type { LeafTransport, TransportAnswer } from '../core/http/leaf-transport.port';
import { LeafClient } from './leaf-client';

const layout = new SnowflakeLayout(DEFAULT_SNOWFLAKE_EPOCH);
const T0 = 1_767_225_600_000;

/** Servers answering the UUIDv7 and TypeID routes as the application does, each its own worker. */
class UuidServers implements LeafTransport {
  readonly requests: string[] = [];
  /** Per server: 'serve', 'refuse', or 'garble' (a 200 whose body is not what was asked). */
  readonly behaviour = new Map<string, 'serve' | 'refuse' | 'garble'>();
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
    const body =
      route === 'uuids'
        ? { key: name, uuids }
        : { prefix: name, typeIds: uuids.map((uuid) => typeIdFromUuid(name, uuid)) };
    return { status: 200, body: JSON.stringify(body) };
  }

  close(): void {}
}

const A = 'http://a.test:8080';
const B = 'http://b.test:8080';

function setup() {
  const servers = new UuidServers();
  const client = new LeafClient({ servers: [A, B], transport: servers, requestTimeoutMs: 50 });
  return { servers, client };
}

describe('LeafClient: UUIDv7 and TypeIDs from the servers', () => {
  it('asks the UUIDv7 and TypeID routes, one request per call, and checks the answers', async () => {
    const { servers, client } = setup();
    const uuids = await client.uuids('order', 3);
    expect(uuids).toHaveLength(3);
    expect(uuids.every(isUuidV7)).toBe(true);
    const typeIds = await client.typeIds('user', 2);
    expect(typeIds.map((t) => parseTypeId(t).prefix)).toEqual(['user', 'user']);
    const bare = await client.typeIds('', 1);
    expect(bare[0]).toMatch(/^[0-7][0-9a-hjkmnp-tv-z]{25}$/);
    expect(servers.requests.map((url) => url.slice(A.length))).toEqual([
      '/api/snowflake/uuids/order?count=3',
      '/api/snowflake/typeids/user?count=2',
      '/api/snowflake/typeids?count=1',
    ]);
    await client.close();
  });

  it('fails over a server that refuses or answers something else, and says so when none can', async () => {
    const { servers, client } = setup();
    servers.behaviour.set(A, 'garble');
    const uuids = await client.uuids('order', 2);
    expect(layout.decode(new SnowflakeUuidV7(layout).toId(uuids[0]!)).workerId).toBe(2);
    servers.behaviour.set(B, 'refuse');
    await expect(client.uuids('order', 1)).rejects.toBeInstanceOf(SnowflakeNotReadyError);
    await client.close();
  });

  it('checks key, prefix and count before sending anything, and refuses after close', async () => {
    const { servers, client } = setup();
    for (const call of [
      () => client.uuids('bad key', 1),
      () => client.uuids('order', 0),
      () => client.typeIds('User', 1),
      () => client.typeIds('user_', 1),
      () => client.typeIds('user', 1001),
    ]) {
      await expect(call()).rejects.toMatchObject({ code: LeafErrorCode.INVALID_ARGUMENT });
      await expect(call()).rejects.toBeInstanceOf(InvalidArgumentError);
    }
    expect(servers.requests).toEqual([]);
    await client.close();
    await expect(client.uuids('order', 1)).rejects.toBeInstanceOf(ShuttingDownError);
  });
});
