import { AllocationError } from '../core/errors/allocation.error';
import { InvalidArgumentError } from '../core/errors/invalid-argument.error';
import { LeafConfigurationError } from '../core/errors/leaf-configuration.error';
import { RateLimitedError } from '../core/errors/rate-limited.error';
import { UnauthorizedError } from '../core/errors/unauthorized.error';
import { LeafError, LeafErrorCode } from '../core/errors/leaf.error';
import { RemoteLeafError } from '../core/errors/remote-leaf.error';
import { SegmentNotReadyError } from '../core/errors/segment-not-ready.error';
import { ShuttingDownError } from '../core/errors/shutting-down.error';
import { TagNotFoundError } from '../core/errors/tag-not-found.error';
import { SegmentCache } from '../core/segment/segment-cache';
import { InMemoryAllocStore } from '../testing/in-memory-alloc.store';
import { FakeClock } from '../testing/fake-clock';
import { rejectionOf, segmentCacheTestOptions, thrownBy } from '../testing/test-helpers';
import { LeafClient } from './leaf-client';
import type { LeafClientOptions } from './leaf-client.options';
import type { LeafTransport, TransportAnswer } from '../core/http/leaf-transport.port';

type Behaviour = 'serve' | 'refuse' | 'hang' | 'db-down' | 'quota';

/**
 * Leaf servers in memory: each a SegmentCache on one shared store (two instances on one
 * database), answering the range and snowflake routes as the application does.
 */
class FakeServers implements LeafTransport {
  readonly store = new InMemoryAllocStore().setTag('order', 100).setTag('user', 100);
  readonly caches = new Map<string, SegmentCache>();
  readonly behaviour = new Map<string, Behaviour>();
  readonly requests: string[] = [];
  /** The headers of each request. */
  readonly headers: Array<Readonly<Record<string, string>> | undefined> = [];
  /** Set: requests without `Authorization: Bearer <token>` are answered 401. */
  token: string | null = null;
  /** Answers that arrived after the client's deadline. */
  readonly late: TransportAnswer[] = [];
  private snowflake = 1000n;
  closed = false;

  async start(...urls: string[]): Promise<this> {
    for (const url of urls) {
      const cache = new SegmentCache(
        this.store,
        segmentCacheTestOptions({ maxRangeCount: 100_000 }),
        new FakeClock(0),
      );
      await cache.refreshTags();
      this.caches.set(url, cache);
      this.behaviour.set(url, 'serve');
    }
    return this;
  }

  async get(
    url: string,
    timeoutMs: number,
    headers?: Readonly<Record<string, string>>,
  ): Promise<TransportAnswer> {
    this.requests.push(url);
    this.headers.push(headers);
    const parsed = new URL(url);
    const base = parsed.origin;
    const behaviour = this.behaviour.get(base);
    if (behaviour === 'refuse' || behaviour === undefined) throw new Error('ECONNREFUSED');
    if (behaviour === 'hang') {
      // The server allocates and answers, but after the client's deadline.
      const late = this.serve(base, parsed);
      await new Promise((resolve) => setTimeout(resolve, timeoutMs));
      this.late.push(await late);
      throw new Error(`no answer within ${timeoutMs} ms`);
    }
    if (this.token !== null && headers?.authorization !== `Bearer ${this.token}`) {
      return answer(new UnauthorizedError('the bearer token is not valid'));
    }
    if (behaviour === 'quota') return answer(new RateLimitedError('over quota', 2000));
    if (behaviour === 'db-down') {
      return answer(new AllocationError('order', 'connect ECONNREFUSED 127.0.0.1:3306'));
    }
    return this.serve(base, parsed);
  }

  private async serve(base: string, parsed: URL): Promise<TransportAnswer> {
    const [, , mode, route, key] = parsed.pathname.split('/');
    const count = Number(parsed.searchParams.get('count'));
    try {
      if (mode === 'segment' && route === 'range') {
        const after = parsed.searchParams.get('after');
        const range = await this.caches
          .get(base)!
          .getRange(key, count, after === null ? undefined : BigInt(after));
        return {
          status: 200,
          body: JSON.stringify({ key, start: `${range.start}`, end: `${range.end}`, count }),
        };
      }
      const ids = Array.from({ length: count }, () => `${this.snowflake++}`);
      return { status: 200, body: JSON.stringify({ key, ids }) };
    } catch (error) {
      return answer(error as LeafError);
    }
  }

  close(): void {
    this.closed = true;
  }

  rangeRequests(): string[] {
    return this.requests.filter((url) => url.includes('/range/'));
  }

  async stop(): Promise<void> {
    for (const cache of this.caches.values()) await cache.close();
  }
}

function answer(error: LeafError): TransportAnswer {
  const status =
    error.code === LeafErrorCode.INVALID_ARGUMENT
      ? 400
      : error.code === LeafErrorCode.TAG_NOT_FOUND
        ? 404
        : error.code === LeafErrorCode.UNAUTHORIZED
          ? 401
          : error.code === LeafErrorCode.RATE_LIMITED
            ? 429
            : 503;
  return {
    status,
    body: JSON.stringify({
      statusCode: status,
      code: error.code,
      message: error.message,
      leafCode: error.leafCode,
    }),
    ...(status === 503 ? { retryAfter: '1' } : status === 429 ? { retryAfter: '2' } : {}),
  };
}

const A = 'http://a.test:8080';
const B = 'http://b.test:8080';

/** The clients and fake servers of the running test, closed after it (client first). */
const opened: Array<{ fake: FakeServers; client: LeafClient }> = [];
afterEach(async () => {
  for (const { fake, client } of opened.splice(0)) {
    await client.close();
    await fake.stop();
  }
});

/** Closes `client`, then stops `fake`, after the test (also when it fails). */
function closeAfterTest(fake: FakeServers, client: LeafClient): void {
  opened.push({ fake, client });
}

async function setup(options: Partial<LeafClientOptions> = {}, servers = [A, B]) {
  const fake = await new FakeServers().start(...servers);
  const client = new LeafClient({
    servers,
    transport: fake,
    requestTimeoutMs: 50,
    waitTimeoutMs: 1000,
    segment: { minRangeSize: 10, maxRangeSize: 80 },
    ...options,
  });
  closeAfterTest(fake, client);
  return { fake, client };
}

describe('LeafClient: segment IDs from local ranges', () => {
  it('serves a range locally: one request per range, synchronous while warm', async () => {
    const { fake, client } = await setup();
    expect(await client.get('segment', 'order')).toBe(1n);
    for (let i = 2n; i <= 9n; i++) expect(client.getSync('order')).toBe(i);
    expect(await client.getIds('segment', 'order', 5)).toEqual([10n, 11n, 12n, 13n, 14n]);
    // Range 1 = [1, 11), range 2 (fetched in the background once 10 % was used) = [11, 21).
    expect(fake.rangeRequests()).toHaveLength(3); // the third is the preload of range 3
    expect(fake.rangeRequests()[0]).toBe(`${A}/api/segment/range/order?count=10`);
  });

  it('all callers waiting for a range share one request', async () => {
    const { fake, client } = await setup();
    const ids = await Promise.all(Array.from({ length: 8 }, () => client.get('segment', 'order')));
    expect(new Set(ids).size).toBe(8);
    expect(fake.rangeRequests().length).toBeLessThanOrEqual(2);
  });

  it('adapts the range size to the rate, within minRangeSize..maxRangeSize', async () => {
    const { fake, client } = await setup({}, [A]);
    await client.getIds('segment', 'order', 1000);
    const counts = fake
      .rangeRequests()
      .map((url) => Number(new URL(url).searchParams.get('count')));
    // Ranges used up far faster than rangeDurationMs: 10, 10, then doubling up to 80.
    expect(counts.slice(0, 6)).toEqual([10, 10, 20, 40, 80, 80]);
    expect(Math.max(...counts)).toBe(80);
  });

  it('asks each range above the previous one (after=), so IDs increase across servers', async () => {
    const { fake, client } = await setup();
    const ids: bigint[] = [];
    for (let i = 0; i < 300; i++) {
      // Move between the two servers every few ranges.
      if (i % 25 === 0) {
        fake.behaviour.set(A, i % 50 === 0 ? 'refuse' : 'serve');
        fake.behaviour.set(B, i % 50 === 0 ? 'serve' : 'refuse');
      }
      ids.push(await client.get('segment', 'order'));
    }
    for (let i = 1; i < ids.length; i++) expect(ids[i]).toBeGreaterThan(ids[i - 1]);
    const afters = fake.rangeRequests().filter((url) => url.includes('after='));
    expect(afters.length).toBeGreaterThan(0);
  });
});

describe('LeafClient: failover, timeouts and errors', () => {
  it('moves to the next server when one refuses, and backs off from it', async () => {
    const { fake, client } = await setup({ backoffMs: 60_000 });
    fake.behaviour.set(A, 'refuse');
    await client.getIds('segment', 'order', 50);
    const asked = fake.rangeRequests().map((url) => new URL(url).origin);
    // A is asked once, then skipped while it is backed off.
    expect(asked.filter((origin) => origin === A)).toHaveLength(1);
    expect(asked.filter((origin) => origin === B).length).toBeGreaterThan(3);
    expect(client.stats().servers).toEqual([
      expect.objectContaining({ url: A, up: false, failures: 1 }),
      expect.objectContaining({ url: B, up: true, failures: 0 }),
    ]);
  });

  it('abandons a timed-out range request: its range is a gap, never used', async () => {
    const { fake, client } = await setup();
    // A allocates the range, but the answer arrives after the deadline.
    fake.behaviour.set(A, 'hang');
    const first = await client.get('segment', 'order');
    expect(fake.late).toHaveLength(1);
    const lost = JSON.parse(fake.late[0].body) as { start: string; end: string };
    expect(lost).toMatchObject({ start: '1', end: '11' });
    expect(first).toBe(11n); // from B, which allocated [11, 21) after A's lost [1, 11)
    fake.behaviour.set(A, 'serve');
    fake.behaviour.set(B, 'refuse');
    const ids = await client.getIds('segment', 'order', 40);
    const all = [first, ...ids];
    expect(new Set(all).size).toBe(41);
    expect(all.every((id) => id >= 11n)).toBe(true);
  });

  it("raises the server's own LeafError for a caller's mistake, without failover", async () => {
    const { fake, client } = await setup();
    const error = await rejectionOf(client.get('segment', 'nope'));
    expect(error).toBeInstanceOf(TagNotFoundError);
    expect((error as TagNotFoundError).code).toBe(LeafErrorCode.TAG_NOT_FOUND);
    expect((error as TagNotFoundError).tag).toBe('nope');
    expect(fake.rangeRequests()).toHaveLength(1);
    await expect(client.get('segment', 'bad key')).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(client.getIds('segment', 'order', 0)).rejects.toBeInstanceOf(InvalidArgumentError);
    const untyped = client as unknown as { get(mode: string, key: string): Promise<bigint> };
    await expect(untyped.get('other', 'order')).rejects.toBeInstanceOf(InvalidArgumentError);
  });

  it('when every server fails: the last server error, or SegmentNotReadyError when none answered', async () => {
    const clock = new FakeClock(1_000_000);
    const { fake, client } = await setup({ clock, backoffMs: 100, maxBackoffMs: 100 });
    fake.behaviour.set(A, 'db-down');
    fake.behaviour.set(B, 'db-down');
    const down = await rejectionOf(client.get('segment', 'order'));
    expect(down).toBeInstanceOf(AllocationError);
    expect((down as AllocationError).code).toBe(LeafErrorCode.ALLOCATION_FAILED);
    expect((down as AllocationError).retryAfterMs).toBe(1000);
    expect(down.message).toMatch(/ECONNREFUSED 127\.0\.0\.1:3306/);
    // Both backed off: the next call fails at once, without a request.
    const asked = fake.requests.length;
    const fast = await rejectionOf(client.get('segment', 'order'));
    expect(fast).toBeInstanceOf(SegmentNotReadyError);
    expect(fast.cause).toBeInstanceOf(AllocationError);
    expect(fake.requests).toHaveLength(asked);
    clock.advance(200);
    fake.behaviour.set(A, 'refuse');
    fake.behaviour.set(B, 'refuse');
    const unreachable = await rejectionOf(client.get('segment', 'order'));
    expect(unreachable).toBeInstanceOf(SegmentNotReadyError);
    expect(fake.requests).toHaveLength(asked + 2);
    // Back: the first request after the back-off is served.
    clock.advance(200);
    fake.behaviour.set(B, 'serve');
    expect(await client.get('segment', 'order')).toBe(1n);
  });

  it('rebuilds codes without a class of their own as RemoteLeafError', async () => {
    const fake = await new FakeServers().start(A);
    fake.get = async () => ({
      status: 503,
      body: JSON.stringify({
        statusCode: 503,
        code: 'LEAF_CLOCK_MOVED_BACKWARDS',
        message: 'behind',
        leafCode: -3,
      }),
      retryAfter: '2',
    });
    const client = new LeafClient({ servers: [A], transport: fake });
    closeAfterTest(fake, client);
    const error = await rejectionOf(client.get('snowflake', 'k'));
    expect(error).toBeInstanceOf(RemoteLeafError);
    expect(error).toMatchObject({
      code: 'LEAF_CLOCK_MOVED_BACKWARDS',
      leafCode: -3,
      retryAfterMs: 2000,
      statusCode: 503,
    });
  });

  it('takes its servers from the resolver', async () => {
    const fake = await new FakeServers().start(B);
    const resolveServers = jest.fn(async () => [B]);
    const client = new LeafClient({
      resolveServers,
      transport: fake,
      segment: { minRangeSize: 10 },
    });
    closeAfterTest(fake, client);
    expect(await client.get('segment', 'order')).toBe(1n);
    expect(resolveServers).toHaveBeenCalledTimes(1);
  });

  it('asks a resolver that threw synchronously again after resolveIntervalMs', async () => {
    const fake = await new FakeServers().start(B);
    const clock = new FakeClock(1_000_000);
    const resolveServers = jest.fn((): string[] => {
      if (resolveServers.mock.calls.length === 1) throw new Error('discovery down');
      return [B];
    });
    const client = new LeafClient({
      resolveServers,
      resolveIntervalMs: 100,
      transport: fake,
      clock,
      segment: { minRangeSize: 10 },
    });
    closeAfterTest(fake, client);
    await expect(client.get('snowflake', 'k')).rejects.toBeInstanceOf(LeafError);
    clock.advance(100);
    expect(await client.get('segment', 'order')).toBe(1n);
    expect(resolveServers).toHaveBeenCalledTimes(2);
  });
});

describe('LeafClient: snowflake batching', () => {
  it('coalesces the calls of one event-loop turn into one batch request', async () => {
    const { fake, client } = await setup();
    const singles = Array.from({ length: 30 }, () => client.get('snowflake', 'k'));
    const batch = client.getIds('snowflake', 'k', 20);
    const ids = [...(await Promise.all(singles)), ...(await batch)];
    expect(new Set(ids).size).toBe(50);
    const requests = fake.requests.filter((url) => url.includes('/snowflake/'));
    expect(requests).toEqual([`${A}/api/snowflake/ids/k?count=50`]);
  });

  it('splits a turn larger than maxBatchSize into several requests', async () => {
    const { fake, client } = await setup({ maxBatchSize: 100 });
    const all = await Promise.all([1, 2, 3].map(() => client.getIds('snowflake', 'k', 60)));
    expect(new Set(all.flat()).size).toBe(180);
    expect(fake.requests.filter((url) => url.includes('/snowflake/'))).toHaveLength(3);
  });
});

describe('LeafClient: sequence mode', () => {
  it('coalesces one turn per key into one /api/sequence/ids request and splits it in call order', async () => {
    const { fake, client } = await setup();
    const first = client.get('sequence', 'k');
    const second = client.getIds('sequence', 'k', 3);
    const other = client.get('snowflake', 'k');
    const [a, b] = [await first, await second];
    await other;
    expect(b[0]).toBe(a + 1n);
    expect(b).toEqual([a + 1n, a + 2n, a + 3n]);
    expect(fake.requests.filter((url) => url.includes('/sequence/'))).toEqual([
      `${A}/api/sequence/ids/k?count=4`,
    ]);
  });

  it('no server answering is LEAF_SEQUENCE_NO_ISSUER; another mode name is an invalid argument', async () => {
    const { fake, client } = await setup();
    fake.behaviour.set(A, 'refuse');
    fake.behaviour.set(B, 'refuse');
    const error = await rejectionOf(client.get('sequence', 'k'));
    expect(error).toMatchObject({ code: LeafErrorCode.SEQUENCE_NO_ISSUER });
    await expect(client.get('other' as 'sequence', 'k')).rejects.toBeInstanceOf(
      InvalidArgumentError,
    );
  });
});

describe('LeafClient: lifecycle', () => {
  it('refuses every call after close and closes its own pools only', async () => {
    const { fake, client } = await setup();
    await client.get('segment', 'order');
    await client.close();
    expect(() => client.getSync('order')).toThrow(ShuttingDownError);
    await expect(client.get('segment', 'user')).rejects.toBeInstanceOf(ShuttingDownError);
    await expect(client.get('snowflake', 'k')).rejects.toBeInstanceOf(ShuttingDownError);
    expect(fake.closed).toBe(false); // the caller's transport is the caller's
  });

  it('lists every invalid option at once', () => {
    expect(
      () =>
        new LeafClient({ servers: ['ftp://x'], segment: { minRangeSize: 10, maxRangeSize: 5 } }),
    ).toThrow(/servers: "ftp:\/\/x"[\s\S]*maxRangeSize \(5\)/);
  });
});

describe('LeafClient: the client token', () => {
  const TOKEN = 'client-token-0123456789abcdef';

  it('sends Authorization: Bearer <token> on every request, range and batch alike', async () => {
    const { fake, client } = await setup({ token: TOKEN }, [A]);
    fake.token = TOKEN;
    expect(await client.get('segment', 'order')).toBe(1n);
    expect(await client.getIds('snowflake', 'k', 3)).toHaveLength(3);
    expect(fake.headers.length).toBeGreaterThanOrEqual(2);
    for (const headers of fake.headers)
      expect(headers).toEqual({ authorization: `Bearer ${TOKEN}` });
  });

  it('without a token sends no Authorization header; a refused one is UnauthorizedError, no failover', async () => {
    const { fake, client } = await setup();
    fake.token = TOKEN;
    const error = await rejectionOf(client.get('segment', 'order'));
    expect(error).toBeInstanceOf(UnauthorizedError);
    expect((error as UnauthorizedError).code).toBe(LeafErrorCode.UNAUTHORIZED);
    expect(fake.rangeRequests()).toHaveLength(1);
    expect(fake.headers).toEqual([undefined]);
    expect(client.stats().servers.every((server) => server.up)).toBe(true);
  });

  it('a 429 is RateLimitedError with Retry-After, thrown at once; the server stays up', async () => {
    const { fake, client } = await setup();
    fake.behaviour.set(A, 'quota');
    fake.behaviour.set(B, 'quota');
    const error = await rejectionOf(client.getIds('snowflake', 'k', 5));
    expect(error).toBeInstanceOf(RateLimitedError);
    expect(error).toMatchObject({ code: LeafErrorCode.RATE_LIMITED, retryAfterMs: 2000 });
    expect(fake.requests).toHaveLength(1);
    expect(client.stats().servers.every((server) => server.up)).toBe(true);
  });

  it.each([
    ['too short', 'short'],
    ['a space', 'client token 0123456789'],
    ['a newline', 'client-token-0123456789\r\nx: y'],
    ['not a string', 1234567890123456],
  ])('refuses a token with %s, without echoing it', (_label, token) => {
    const error = thrownBy(() => new LeafClient({ servers: [A], token: token as string }));
    expect(error).toBeInstanceOf(LeafConfigurationError);
    const message = error.message;
    expect(message).toMatch(/token must be/);
    expect(message).not.toContain(String(token));
  });
});

describe('LeafClient: options', () => {
  it('refuses servers that are not an array as a configuration problem', () => {
    const error = thrownBy(() => new LeafClient({ servers: A as unknown as string[] }));
    expect(error).toBeInstanceOf(LeafConfigurationError);
    expect(error.message).toContain('servers must be an array of base URLs');
  });
});
