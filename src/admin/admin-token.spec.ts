import { loadAppConfig } from '../config/app-config';
import { bearerToken, tokenMatches } from './admin-token';

// The module object itself (a namespace import would be a frozen copy): what admin-token.ts calls.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const crypto = require('node:crypto') as typeof import('node:crypto');

describe('admin token', () => {
  it('reads a bearer token from the Authorization header', () => {
    expect(bearerToken('Bearer abc.def-123')).toBe('abc.def-123');
    expect(bearerToken('bearer   xyz')).toBe('xyz');
    for (const header of [undefined, '', 'Basic abc', 'Bearer', 'Bearer a b', ['Bearer a']]) {
      expect(bearerToken(header)).toBeNull();
    }
  });

  it('matches only the exact token, comparing equal-length digests in constant time', () => {
    const spy = jest.spyOn(crypto, 'timingSafeEqual');
    const secret = 'correct-horse-battery-staple';
    expect(tokenMatches(secret, secret)).toBe(true);
    for (const given of [null, '', 'correct', `${secret}x`, secret.toUpperCase()]) {
      expect(tokenMatches(given, secret)).toBe(false);
    }
    expect(spy).toHaveBeenCalledTimes(6);
    for (const [a, b] of spy.mock.calls) {
      expect((a as Buffer).length).toBe(32);
      expect((b as Buffer).length).toBe(32);
    }
    spy.mockRestore();
  });
});

describe('LEAF_ADMIN_TOKEN and LEAF_MONITOR_PAGES', () => {
  const token = 'a-token-of-24-characters';

  it('default: no admin token, pages open', () => {
    expect(loadAppConfig({})).toMatchObject({ adminToken: null, monitorPages: 'open' });
  });

  it('reads both', () => {
    expect(loadAppConfig({ LEAF_ADMIN_TOKEN: token, LEAF_MONITOR_PAGES: 'TOKEN' })).toMatchObject({
      adminToken: token,
      monitorPages: 'token',
    });
    expect(loadAppConfig({ LEAF_MONITOR_PAGES: 'off' }).monitorPages).toBe('off');
  });

  it('production closes the pages unless opened: behind the admin token, else not served', () => {
    const production = { NODE_ENV: 'production', LEAF_DB_URL: 'mysql://leaf@db:3306/leaf' };
    expect(loadAppConfig(production).monitorPages).toBe('off');
    expect(loadAppConfig({ ...production, LEAF_ADMIN_TOKEN: token }).monitorPages).toBe('token');
    expect(loadAppConfig({ ...production, LEAF_MONITOR_PAGES: 'open' }).monitorPages).toBe('open');
  });

  it('refuses an unknown mode, token mode without a token, and a short token', () => {
    expect(() => loadAppConfig({ LEAF_MONITOR_PAGES: 'closed' })).toThrow(
      /LEAF_MONITOR_PAGES must be one of open, token, off/,
    );
    expect(() => loadAppConfig({ LEAF_MONITOR_PAGES: 'token' })).toThrow(
      /LEAF_MONITOR_PAGES=token needs LEAF_ADMIN_TOKEN/,
    );
    expect(() => loadAppConfig({ LEAF_ADMIN_TOKEN: 'short' })).toThrow(/at least 16 characters/);
  });
});
