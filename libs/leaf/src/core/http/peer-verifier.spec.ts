// The module object itself (not an import namespace): its functions can be spied on.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const crypto = require('node:crypto') as typeof import('node:crypto');
import { PEER_HEADERS, PEER_WINDOW_MS, PeerSigner } from './peer-signature';
import { PeerVerifier, type PeerRequest } from './peer-verifier';

const NEW = 'n'.repeat(16) + 'new-secret-0123456789';
const OLD = 'o'.repeat(16) + 'old-secret-0123456789';
const PATH = '/api/sequence/internal/ranges';
const QUERY = 'keys=a,b&counts=1,5';

/** A clock the test moves. */
function clock(start = 1_800_000_000_000) {
  let now = start;
  return { now: () => now, advance: (ms: number) => (now += ms) };
}

function signed(
  signer: PeerSigner,
  method = 'GET',
  path = PATH,
  query = QUERY,
): PeerRequest & { headers: Record<string, string> } {
  return {
    method,
    url: query === '' ? path : `${path}?${query}`,
    headers: signer.headers(method, path, query),
  };
}

describe('PeerSigner and PeerVerifier', () => {
  it('a request signed with the secret passes once; the same request again is a replay', () => {
    const time = clock();
    const verifier = new PeerVerifier([NEW], time.now);
    const request = signed(new PeerSigner(NEW, time.now));
    expect(verifier.verify(request)).toBe('ok');
    expect(verifier.verify(request)).toBe('replayed');
    time.advance(PEER_WINDOW_MS - 1);
    expect(verifier.verify(request)).toBe('replayed');
    // Two requests alike but for their nonce are both taken.
    const signer = new PeerSigner(NEW, time.now);
    expect(verifier.verify(signed(signer))).toBe('ok');
    expect(verifier.verify(signed(signer))).toBe('ok');
  });

  it('refuses a missing, malformed, forged or tampered credential', () => {
    const time = clock();
    const verifier = new PeerVerifier([NEW], time.now);
    const signer = new PeerSigner(NEW, time.now);
    expect(verifier.verify({ method: 'GET', url: PATH, headers: {} })).toBe('missing');
    const good = signed(signer);
    const without = (name: string) => {
      const headers = { ...good.headers };
      delete headers[name];
      return { ...good, headers };
    };
    expect(verifier.verify(without(PEER_HEADERS.signature))).toBe('malformed');
    expect(verifier.verify(without(PEER_HEADERS.nonce))).toBe('malformed');
    expect(verifier.verify(without(PEER_HEADERS.time))).toBe('malformed');
    const withHeader = (name: string, value: string | string[]) => ({
      ...good,
      headers: { ...good.headers, [name]: value },
    });
    expect(verifier.verify(withHeader(PEER_HEADERS.time, '12.5'))).toBe('malformed');
    expect(verifier.verify(withHeader(PEER_HEADERS.signature, 'x'.repeat(44)))).toBe('malformed');
    expect(verifier.verify(withHeader(PEER_HEADERS.nonce, ['a'.repeat(16), 'b'.repeat(16)]))).toBe(
      'malformed',
    );
    // Another secret, another path, query or method: the signature does not fit.
    expect(verifier.verify(signed(new PeerSigner(OLD, time.now)))).toBe('forged');
    expect(verifier.verify({ ...signed(signer), url: `${PATH}?keys=a,b&counts=1,6` })).toBe(
      'forged',
    );
    expect(verifier.verify({ ...signed(signer), url: '/api/sequence/internal/instance' })).toBe(
      'forged',
    );
    expect(verifier.verify({ ...signed(signer), method: 'POST' })).toBe('forged');
    const other = signed(signer);
    expect(
      verifier.verify({
        ...other,
        headers: { ...other.headers, [PEER_HEADERS.nonce]: 'another-nonce-123' },
      }),
    ).toBe('forged');
    expect(
      verifier.verify({
        ...other,
        headers: { ...other.headers, [PEER_HEADERS.time]: String(time.now() + 1) },
      }),
    ).toBe('forged');
    // A forged request is not remembered: the genuine one still passes.
    expect(verifier.verify(other)).toBe('ok');
  });

  it('takes a time within the window either way, and refuses one outside it', () => {
    const sender = clock();
    const receiver = clock();
    const verifier = new PeerVerifier([NEW], receiver.now);
    const signer = new PeerSigner(NEW, sender.now);
    const late = signed(signer);
    receiver.advance(PEER_WINDOW_MS + 1);
    expect(verifier.verify(late)).toBe('expired');
    receiver.advance(-(PEER_WINDOW_MS + 1));
    sender.advance(PEER_WINDOW_MS);
    expect(verifier.verify(signed(signer))).toBe('ok'); // sender's clock ahead by the window
    sender.advance(1);
    expect(verifier.verify(signed(signer))).toBe('expired');
    sender.advance(-2 * PEER_WINDOW_MS - 1);
    expect(verifier.verify(signed(signer))).toBe('ok'); // behind by the window
  });

  it('rotation: accepts either secret listed, so new- and old-signed requests pass during the overlap', () => {
    const time = clock();
    const during = new PeerVerifier([NEW, OLD], time.now);
    expect(during.verify(signed(new PeerSigner(NEW, time.now)))).toBe('ok');
    expect(during.verify(signed(new PeerSigner(OLD, time.now)))).toBe('ok');
    const after = new PeerVerifier([NEW], time.now);
    expect(after.verify(signed(new PeerSigner(OLD, time.now)))).toBe('forged');
    expect(after.verify(signed(new PeerSigner(NEW, time.now)))).toBe('ok');
  });

  it('compares in constant time against every secret, whichever signed (no early exit)', () => {
    const time = clock();
    const verifier = new PeerVerifier([NEW, OLD], time.now);
    const compare = jest.spyOn(crypto, 'timingSafeEqual');
    try {
      for (const secret of [NEW, OLD, 'z'.repeat(40)]) {
        compare.mockClear();
        verifier.verify(signed(new PeerSigner(secret, time.now)));
        expect(compare).toHaveBeenCalledTimes(2);
        for (const [a, b] of compare.mock.calls) {
          expect([(a as Buffer).length, (b as Buffer).length]).toEqual([32, 32]);
        }
      }
    } finally {
      compare.mockRestore();
    }
  });

  it('signs a probe without a query string', () => {
    const time = clock();
    const verifier = new PeerVerifier([NEW], time.now);
    const probe = signed(
      new PeerSigner(NEW, time.now),
      'GET',
      '/api/sequence/internal/instance',
      '',
    );
    expect(probe.url).toBe('/api/sequence/internal/instance');
    expect(verifier.verify(probe)).toBe('ok');
    expect(verifier.verify({ ...probe, url: `${probe.url}?` })).toBe('replayed');
  });

  it('remembers a bounded number of nonces: full, it forgets the oldest second and refuses requests signed in it', () => {
    const time = clock();
    const verifier = new PeerVerifier([NEW], time.now, { capacity: 3 });
    const signer = new PeerSigner(NEW, time.now);
    const first = signed(signer);
    expect(verifier.verify(first)).toBe('ok');
    time.advance(1000);
    const second = signed(signer);
    const keptBack = signed(signer);
    expect([verifier.verify(second), verifier.verify(signed(signer))]).toEqual(['ok', 'ok']);
    expect(verifier.remembered).toBe(3);
    time.advance(1000);
    expect(verifier.verify(signed(signer))).toBe('ok'); // the first second is forgotten
    expect(verifier.remembered).toBe(3);
    expect(verifier.verify(first)).toBe('replayed'); // forgotten, refused all the same
    expect(verifier.verify(second)).toBe('replayed');
    // A request of the second second, never seen, is refused too: too old to tell now.
    expect(verifier.verify(keptBack)).toBe('replayed');
    // One second alone at the capacity: refused until it passes.
    const busy = new PeerVerifier([NEW], time.now, { capacity: 2 });
    expect([busy.verify(signed(signer)), busy.verify(signed(signer))]).toEqual(['ok', 'ok']);
    expect(busy.verify(signed(signer))).toBe('replayed');
    time.advance(1000);
    expect(busy.verify(signed(signer))).toBe('ok');
  });

  it('forgets what has left the window, and never takes it back when the clock steps back', () => {
    const time = clock();
    const verifier = new PeerVerifier([NEW], time.now);
    const signer = new PeerSigner(NEW, time.now);
    const old = signed(signer);
    expect(verifier.verify(old)).toBe('ok');
    for (let i = 0; i < 5; i++) expect(verifier.verify(signed(signer))).toBe('ok');
    time.advance(PEER_WINDOW_MS + 2000);
    expect(verifier.verify(signed(signer))).toBe('ok');
    expect(verifier.remembered).toBe(1);
    time.advance(-(PEER_WINDOW_MS + 2000));
    expect(verifier.verify(old)).toBe('replayed');
  });
});
