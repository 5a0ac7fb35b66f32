import { createHash } from 'node:crypto';
import { ForbiddenError, RateLimitedError, UnauthorizedError } from 'nestjs-leaf/errors';
import { ClientAccess } from './client-access';
import { parseClientDefinitions } from './client-definitions';

const ORDERS = 'client-token-orders-0123456789';
const ALL = 'client-token-all-0123456789ab';
const hashOf = (token: string) => createHash('sha256').update(token).digest('hex');

function access(now: { t: number }): ClientAccess {
  const { clients, problems } = parseClientDefinitions(
    JSON.stringify([
      {
        name: 'orders',
        sha256: hashOf(ORDERS),
        modes: ['segment', 'sequence'],
        tags: ['order-*', 'invoice'],
        idsPerSecond: 1000,
        burst: 2000,
      },
      { name: 'all', sha256: hashOf(ALL), modes: ['*'], tags: ['*'] },
    ]),
    'LEAF_CLIENT_TOKENS',
  );
  expect(problems).toEqual([]);
  return new ClientAccess(clients, () => now.t);
}

describe('ClientAccess', () => {
  it('401 without a token or with an unknown one', () => {
    const a = access({ t: 0 });
    expect(() => a.admit(null, 'segment', 'order-1', 1)).toThrow(UnauthorizedError);
    expect(() => a.admit('client-token-unknown-0123456', 'segment', 'order-1', 1)).toThrow(
      UnauthorizedError,
    );
    expect(() => a.admit(hashOf(ORDERS), 'segment', 'order-1', 1)).toThrow(UnauthorizedError);
  });

  it('remembers only tokens that matched a client, at most one per client', () => {
    const a = access({ t: 0 });
    for (let i = 0; i < 100; i++) {
      expect(() => a.admit(`client-token-stranger-${i}-0123456`, 'segment', 'order-1', 1)).toThrow(
        UnauthorizedError,
      );
    }
    expect(a.rememberedTokens).toBe(0);
    for (let i = 0; i < 3; i++) {
      expect(a.admit(ORDERS, 'segment', 'order-1', 1).name).toBe('orders');
      expect(a.admit(ALL, 'snowflake', null, 1).name).toBe('all');
    }
    expect(a.rememberedTokens).toBe(2);
    // A remembered token is still held to its scope; a near miss is still refused.
    expect(() => a.admit(ORDERS, 'snowflake', 'order-1', 1)).toThrow(ForbiddenError);
    expect(() => a.admit(`${ORDERS}x`, 'segment', 'order-1', 1)).toThrow(UnauthorizedError);
    expect(a.rememberedTokens).toBe(2);
  });

  it('403 for a mode or a tag the client may not use, or a cost above its burst', () => {
    const a = access({ t: 0 });
    expect(() => a.admit(ORDERS, 'snowflake', 'order-1', 1)).toThrow(ForbiddenError);
    expect(() => a.admit(ORDERS, 'segment', 'user', 1)).toThrow(ForbiddenError);
    expect(() => a.admit(ORDERS, 'segment', 'order-1', 2001)).toThrow(ForbiddenError);
    expect(a.admit(ORDERS, 'segment', 'invoice', 1).name).toBe('orders');
    expect(a.admit(ORDERS, null, 'order-9', 0).name).toBe('orders');
    expect(a.admit(ALL, 'snowflake', null, 5000).name).toBe('all');
  });

  it('429 over the quota, with the wait; a refusal takes nothing; refilled after the wait', () => {
    const now = { t: 0 };
    const a = access(now);
    a.admit(ORDERS, 'segment', 'order-1', 1500);
    let refusal: unknown;
    try {
      a.admit(ORDERS, 'segment', 'order-1', 1000);
    } catch (error) {
      refusal = error;
    }
    expect(refusal).toBeInstanceOf(RateLimitedError);
    expect((refusal as RateLimitedError).retryAfterMs).toBe(500);
    // The refusal took nothing: the 500 left are still there.
    expect(a.admit(ORDERS, 'segment', 'order-1', 500).name).toBe('orders');
    now.t = 1000;
    expect(a.admit(ORDERS, 'segment', 'order-1', 1000).name).toBe('orders');
    // A client without a quota is never limited; quotas are per client.
    for (let i = 0; i < 10; i++) a.admit(ALL, 'segment', 'x', 1_000_000);
  });
});
