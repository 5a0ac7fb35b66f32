import {
  GaplessBusyError,
  GaplessKeyMismatchError,
  GaplessNotReservedError,
  GaplessReservationExpiredError,
  GaplessSeriesNotFoundError,
  GaplessSettledError,
} from '../core/errors/gapless.error';
import { InvalidArgumentError } from '../core/errors/invalid-argument.error';
import { LeafConfigurationError } from '../core/errors/leaf-configuration.error';
import { LeafError, LeafErrorCode } from '../core/errors/leaf.error';
import { ModeDisabledError } from '../core/errors/mode-disabled.error';
import type { GaplessNumber } from '../core/gapless/gapless-batch';
import { GaplessGroupCommit } from '../core/gapless/gapless-group-commit';
import { gaplessNumberJson } from '../core/gapless/gapless-number.json';
import { checkNewGaplessSeries } from '../core/gapless/gapless-series';
import type { LeafTransport, TransportAnswer } from '../core/http/leaf-transport.port';
import { InMemoryGaplessStore } from '../testing/in-memory-gapless.store';
import { rejectionOf } from '../testing/test-helpers';
import { LeafClient } from './leaf-client';

const STATUS: Partial<Record<string, number>> = {
  [LeafErrorCode.INVALID_ARGUMENT]: 400,
  [LeafErrorCode.MODE_DISABLED]: 404,
  [LeafErrorCode.GAPLESS_SERIES_NOT_FOUND]: 404,
  [LeafErrorCode.GAPLESS_NOT_RESERVED]: 404,
  [LeafErrorCode.GAPLESS_KEY_MISMATCH]: 409,
  [LeafErrorCode.GAPLESS_SETTLED]: 409,
  [LeafErrorCode.GAPLESS_RESERVATION_EXPIRED]: 410,
};

/**
 * Leaf servers with gapless series in memory: each its own group commit on one shared store
 * (instances on one database), answering `POST /api/gapless/{series}/{action}` as the
 * application does; a server can be down (connection refused) or answer 503.
 */
class GaplessServers implements LeafTransport {
  now = Date.UTC(2026, 0, 1);
  readonly store = new InMemoryGaplessStore(() => this.now);
  readonly commits = new Map<string, GaplessGroupCommit>();
  readonly down = new Set<string>();
  readonly failing = new Set<string>();
  readonly sent: Array<{ url: string; body: unknown }> = [];
  /** The server of each request. */
  readonly origins: string[] = [];
  disabled = false;

  constructor(...urls: string[]) {
    for (const url of urls) this.commits.set(url, new GaplessGroupCommit(this.store, 100));
  }

  get(): Promise<TransportAnswer> {
    return Promise.reject(new Error('gapless calls are POSTs'));
  }

  async post(url: string, body: string): Promise<TransportAnswer> {
    const parsed = new URL(url);
    const json = JSON.parse(body) as Record<string, string | number | undefined>;
    this.sent.push({ url: parsed.pathname, body: json });
    this.origins.push(parsed.origin);
    if (this.down.has(parsed.origin)) throw new Error('ECONNREFUSED');
    if (this.failing.has(parsed.origin)) return error(503, 'LEAF_ALLOCATION_FAILED', 'db down');
    if (this.disabled) return answer(new ModeDisabledError('gapless'));
    const [, , , series, action] = parsed.pathname.split('/');
    const commit = this.commits.get(parsed.origin)!;
    const key = json.key as string;
    const number = json.number === undefined ? 0n : BigInt(json.number);
    try {
      const op =
        action === 'reserve'
          ? { kind: 'reserve' as const, key, ttlMs: (json.ttlMs as number | undefined) ?? 60_000 }
          : action === 'confirm'
            ? { kind: 'confirm' as const, key, number }
            : { kind: 'void' as const, key, number, reason: json.reason as string };
      const value = (await commit.submit(decodeURIComponent(series!), op)) as GaplessNumber;
      return { status: 200, body: JSON.stringify(gaplessNumberJson(value)) };
    } catch (thrown) {
      return answer(thrown as LeafError);
    }
  }

  close(): void {}
}

function error(status: number, code: string, message: string): TransportAnswer {
  return { status, body: JSON.stringify({ statusCode: status, code, message }) };
}

function answer(thrown: LeafError): TransportAnswer {
  return error(STATUS[thrown.code] ?? 503, thrown.code, thrown.message);
}

const A = 'http://leaf-a:8080';
const B = 'http://leaf-b:8080';

async function setUp(transport = new GaplessServers(A, B)) {
  await transport.store.createSeries(checkNewGaplessSeries({ name: 'inv', prefix: 'INV' }));
  const client = new LeafClient({ servers: [A, B], transport, requestTimeoutMs: 200 });
  return { transport, client, gapless: client.gapless };
}

describe('LeafClient.gapless', () => {
  it('reserves, confirms and voids through the servers, numbers as bigints, the same key the same number on any server', async () => {
    const { transport, client, gapless } = await setUp();
    const first = await gapless.reserve('inv', 'order-1', 30_000);
    expect(first).toEqual({
      series: 'inv',
      periodKey: '',
      number: 1n,
      text: 'INV-000001',
      state: 'reserved',
      key: 'order-1',
      reason: null,
      expiresAt: transport.now + 30_000,
    });
    expect(transport.sent[0]).toEqual({
      url: '/api/gapless/inv/reserve',
      body: { key: 'order-1', ttlMs: 30_000 },
    });
    transport.down.add(A);
    expect((await gapless.reserve('inv', 'order-1')).number).toBe(1n);
    expect((await gapless.reserve('inv', 'order-2')).number).toBe(2n);
    const confirmed = await gapless.confirm('inv', 1n, 'order-1');
    expect(confirmed).toMatchObject({ number: 1n, state: 'confirmed', expiresAt: null });
    expect(await gapless.confirm('inv', '1', 'order-1')).toEqual(confirmed);
    expect(await gapless.void('inv', 2n, 'order-2', 'cancelled')).toMatchObject({
      number: 2n,
      state: 'voided',
      reason: 'cancelled',
    });
    expect(transport.sent.at(-1)).toEqual({
      url: '/api/gapless/inv/void',
      body: { number: '2', key: 'order-2', reason: 'cancelled' },
    });
    await client.close();
  });

  it('fails a server that answers 503 over to the next, which answers the same key with its number', async () => {
    const { transport, client, gapless } = await setUp();
    transport.failing.add(A);
    const first = await gapless.reserve('inv', 'k');
    expect(await gapless.reserve('inv', 'k')).toEqual(first);
    expect(first.number).toBe(1n);
    // A answered 503 once and was failed over to B; then A was in its back-off.
    expect(transport.origins).toEqual([A, B, B]);
    await client.close();
  });

  it("rebuilds the servers' refusals as the same classes, with the series, key and numbers", async () => {
    const { transport, client, gapless } = await setUp();
    await gapless.reserve('inv', 'a');
    await gapless.reserve('inv', 'b');
    await gapless.void('inv', 1n, 'a', 'typo');
    const settled = await rejectionOf(gapless.confirm('inv', 1n, 'a'));
    expect(settled).toBeInstanceOf(GaplessSettledError);
    expect(settled).toMatchObject({ series: 'inv', number: '1', state: 'voided' });
    const mismatch = await rejectionOf(gapless.confirm('inv', 1n, 'b'));
    expect(mismatch).toBeInstanceOf(GaplessKeyMismatchError);
    expect(mismatch).toMatchObject({ series: 'inv', key: 'b', number: '1', held: '2' });
    const missing = await rejectionOf(gapless.confirm('inv', 9n, 'nobody'));
    expect(missing).toBeInstanceOf(GaplessNotReservedError);
    expect(missing).toMatchObject({ series: 'inv', key: 'nobody' });
    expect(await rejectionOf(gapless.reserve('nope', 'a'))).toBeInstanceOf(
      GaplessSeriesNotFoundError,
    );
    await gapless.reserve('inv', 'late', 1000);
    transport.now += 1001;
    const expired = await rejectionOf(gapless.confirm('inv', 3n, 'late'));
    expect(expired).toBeInstanceOf(GaplessReservationExpiredError);
    expect(expired).toMatchObject({ series: 'inv', number: '3' });
    transport.disabled = true;
    expect(await rejectionOf(gapless.reserve('inv', 'x'))).toEqual(
      expect.objectContaining({ code: LeafErrorCode.MODE_DISABLED, mode: 'gapless' }),
    );
    // A refusal is the caller's: no server was marked down for it.
    expect(client.stats().servers.every((s) => s.up)).toBe(true);
    await client.close();
  });

  it('checks every argument before anything is sent', async () => {
    const { transport, client, gapless } = await setUp();
    const calls = [
      () => gapless.reserve('bad series', 'k'),
      () => gapless.reserve('inv', ''),
      () => gapless.reserve('inv', 'k', 0),
      () => gapless.reserve('inv', 'k', 1.5),
      () => gapless.confirm('inv', -1n, 'k'),
      () => gapless.confirm('inv', '01', 'k'),
      () => gapless.confirm('inv', '99999999999999999999', 'k'),
      () => gapless.void('inv', 1n, 'k', '  '),
      () => gapless.void('inv', 1n, 'k', 'x'.repeat(257)),
      () => gapless.void('inv', 1n, 'k', 'bad\u0000reason'),
    ];
    for (const call of calls)
      expect(await rejectionOf(call())).toBeInstanceOf(InvalidArgumentError);
    expect(transport.sent).toEqual([]);
    await client.close();
  });

  it('answers GaplessBusyError when no server answers, and refuses a transport without post()', async () => {
    const { transport, client, gapless } = await setUp();
    transport.down.add(A).add(B);
    expect(await rejectionOf(gapless.reserve('inv', 'k'))).toBeInstanceOf(GaplessBusyError);
    await client.close();
    const getOnly = new LeafClient({
      servers: [A],
      transport: { get: () => Promise.reject(new Error('no')), close: () => undefined },
    });
    expect(await rejectionOf(getOnly.gapless.reserve('inv', 'k'))).toBeInstanceOf(
      LeafConfigurationError,
    );
    await getOnly.close();
  });
});
