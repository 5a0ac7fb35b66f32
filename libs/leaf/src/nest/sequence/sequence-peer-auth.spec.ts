import { Logger } from '@nestjs/common';
import { LeafErrorCode } from '../../core/errors/leaf.error';
import { PeerSigner } from '../../core/http/peer-signature';
import { FakeClock } from '../../testing/fake-clock';
import type { ResolvedLeafOptions } from '../leaf-options.interface';
import { SequencePeerAuth } from './sequence-peer-auth';

const SECRET = 's'.repeat(40);
const PATH = '/api/sequence/internal/instance';

function auth(clusterSecret: string[], clock = new FakeClock()) {
  const options = { sequence: { clusterSecret }, clock } as unknown as ResolvedLeafOptions;
  return { auth: new SequencePeerAuth(options), clock };
}

describe('SequencePeerAuth', () => {
  let warn: jest.SpyInstance;
  beforeEach(() => {
    warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
  });
  afterEach(() => warn.mockRestore());

  it('without a secret: everything passes, and the start warns once', () => {
    const { auth: open } = auth([]);
    open.onModuleInit();
    expect(open.enabled).toBe(false);
    expect(open.signer()).toBeNull();
    expect(() => open.check({ method: 'GET', url: PATH, headers: {} })).not.toThrow();
    expect(warn).toHaveBeenCalledTimes(1);
    expect(String(warn.mock.calls[0]![0])).toMatch(/without a cluster secret/);
  });

  it('with one: its own signature passes, anything else is UnauthorizedError naming no secret, warned about at most once a minute', () => {
    const { auth: guarded, clock } = auth([SECRET]);
    guarded.onModuleInit();
    expect(warn).not.toHaveBeenCalled();
    const headers = guarded.signer()!.headers('GET', PATH, '');
    expect(() => guarded.check({ method: 'GET', url: PATH, headers })).not.toThrow();
    const refused = (headers: Record<string, string>) => {
      try {
        guarded.check({ method: 'GET', url: PATH, headers });
      } catch (error) {
        return error as { code: string; message: string };
      }
      throw new Error('not refused');
    };
    const replay = refused(headers);
    expect(replay.code).toBe(LeafErrorCode.UNAUTHORIZED);
    expect(replay.message).not.toContain(SECRET);
    const other = new PeerSigner('o'.repeat(40), () => clock.now());
    for (let i = 0; i < 5; i++) refused(other.headers('GET', PATH, ''));
    refused({});
    expect(guarded.refused).toMatchObject({ replayed: 1, forged: 5, missing: 1 });
    expect(warn).toHaveBeenCalledTimes(1); // the first refusal; the rest within the minute
    clock.advance(60_000);
    refused({});
    expect(warn).toHaveBeenCalledTimes(2);
    expect(String(warn.mock.calls[1]![0])).toMatch(/\(forged 5, missing 2\)/);
  });
});
