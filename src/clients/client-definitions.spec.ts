import { createHash } from 'node:crypto';
import { LeafConfigurationError } from 'nestjs-leaf';
import { loadAppConfig } from '../config/app-config';
import { loadClientDefinitions, parseClientDefinitions } from './client-definitions';

const hashOf = (token: string) => createHash('sha256').update(token).digest('hex');
const HASH = hashOf('client-token-orders-0123456789');
const OTHER = hashOf('client-token-users-0123456789');
const parse = (value: unknown) =>
  parseClientDefinitions(JSON.stringify(value), 'LEAF_CLIENT_TOKENS');

describe('parseClientDefinitions', () => {
  it('reads each client: modes ("*" = all), tags, quota (burst defaults to the rate)', () => {
    const { clients, problems } = parse([
      { name: 'orders', sha256: HASH.toUpperCase(), modes: ['segment'], tags: ['order-*'] },
      { name: 'all', sha256: OTHER, modes: ['*'], tags: ['*'], idsPerSecond: 500 },
    ]);
    expect(problems).toEqual([]);
    expect(clients[0]).toMatchObject({ name: 'orders', sha256: HASH, quota: null });
    expect([...clients[0].modes]).toEqual(['segment']);
    expect(clients[0].tags.matches('order-1')).toBe(true);
    expect([...clients[1].modes]).toEqual(['segment', 'snowflake', 'sequence', 'gapless']);
    expect(clients[1].quota).toEqual({ idsPerSecond: 500, burst: 500 });
  });

  it('lists every problem of every entry, naming the entry, never echoing a hash', () => {
    const { clients, problems } = parse([
      { name: 'orders', sha256: HASH, modes: ['segment'], tags: ['order-*'], idsPerSec: 5 },
      { name: 'orders', sha256: HASH, modes: [], tags: ['bad tag'] },
      { name: 'x', sha256: 'client-token-in-clear-0123456789', modes: ['other'], tags: [] },
      { name: 'q', sha256: OTHER, modes: ['*'], tags: ['*'], burst: 10 },
      {
        name: 'r',
        sha256: hashOf('r-token-0123456789'),
        modes: ['*'],
        tags: ['*'],
        idsPerSecond: 0,
      },
      'not an object',
    ]);
    expect(clients).toEqual([]);
    expect(problems).toEqual([
      'LEAF_CLIENT_TOKENS[0] ("orders"): unknown field(s) "idsPerSec"',
      'LEAF_CLIENT_TOKENS[1] ("orders"): name is already used by entry 0',
      `LEAF_CLIENT_TOKENS[1] ("orders"): sha256 is the same as entry 0's (one token, one client)`,
      expect.stringMatching(/^LEAF_CLIENT_TOKENS\[1\] \("orders"\): modes must be/),
      expect.stringMatching(/^LEAF_CLIENT_TOKENS\[1\] \("orders"\): tags must be/),
      expect.stringMatching(/^LEAF_CLIENT_TOKENS\[2\] \("x"\): sha256 must be the token's SHA-256/),
      expect.stringMatching(/^LEAF_CLIENT_TOKENS\[2\] \("x"\): modes must be/),
      expect.stringMatching(/^LEAF_CLIENT_TOKENS\[2\] \("x"\): tags must be/),
      'LEAF_CLIENT_TOKENS[3] ("q"): burst needs idsPerSecond (the rate the burst refills at)',
      'LEAF_CLIENT_TOKENS[4] ("r"): idsPerSecond must be an integer in 1..1000000000',
      'LEAF_CLIENT_TOKENS[5] must be an object {name, sha256, modes, tags}',
    ]);
    const text = problems.join('\n');
    expect(text).not.toContain(HASH);
    expect(text).not.toContain('client-token-in-clear');
  });

  it.each([
    ['not JSON, quoting nothing of it', `[{"sha256":"${HASH}"`],
    ['an empty array', '[]'],
    ['an object', '{}'],
  ])('refuses %s', (_label, text) => {
    const { problems } = parseClientDefinitions(text, 'LEAF_CLIENT_TOKENS');
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/^LEAF_CLIENT_TOKENS (is not valid JSON|must be a non-empty)/);
    expect(problems[0]).not.toContain(HASH);
  });
});

describe('loadClientDefinitions', () => {
  const json = JSON.stringify([{ name: 'a', sha256: HASH, modes: ['*'], tags: ['*'] }]);
  const noFile = () => {
    throw Object.assign(new Error('nope'), { code: 'ENOENT' });
  };

  it('neither set: null (open); inline or file: the clients; both: refused', () => {
    expect(loadClientDefinitions(undefined, undefined, noFile)).toEqual({
      clients: null,
      problems: [],
    });
    expect(loadClientDefinitions(json, undefined, noFile).clients).toHaveLength(1);
    expect(
      loadClientDefinitions(undefined, '/run/secrets/tokens.json', () => json).clients,
    ).toHaveLength(1);
    expect(loadClientDefinitions(json, '/x', () => json).problems).toEqual([
      'LEAF_CLIENT_TOKENS and LEAF_CLIENT_TOKENS_FILE are exclusive: set one',
    ]);
  });

  it('a file that cannot be read, or holds invalid clients, names the file', () => {
    expect(loadClientDefinitions(undefined, '/missing.json', noFile).problems).toEqual([
      'LEAF_CLIENT_TOKENS_FILE /missing.json cannot be read (ENOENT)',
    ]);
    expect(loadClientDefinitions(undefined, '/t.json', () => '[1]').problems).toEqual([
      'LEAF_CLIENT_TOKENS_FILE /t.json[0] must be an object {name, sha256, modes, tags}',
    ]);
  });
});

describe('loadAppConfig with client tokens', () => {
  it('refuses to start on an invalid definition, listing the problems and no hash', () => {
    const env = {
      LEAF_CLIENT_TOKENS: JSON.stringify([
        { name: 'a', sha256: HASH, modes: ['nope'], tags: ['*'] },
      ]),
    };
    expect(() => loadAppConfig(env)).toThrow(LeafConfigurationError);
    expect(() => loadAppConfig(env)).toThrow('LEAF_CLIENT_TOKENS[0] ("a"): modes must be');
    expect(() => loadAppConfig(env)).not.toThrow(HASH);
  });

  it('without either variable the routes are open (clientTokens null)', () => {
    expect(loadAppConfig({}).clientTokens).toBeNull();
  });
});
