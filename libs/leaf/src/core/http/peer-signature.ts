import { createHmac, createSecretKey, randomBytes, type KeyObject } from 'node:crypto';

/**
 * The headers of a request between instances signed with the cluster secret (docs/security.md,
 * "Peers"): the sender's time (ms since the epoch), a nonce never sent twice, and the HMAC.
 */
export const PEER_HEADERS = {
  time: 'x-leaf-peer-time',
  nonce: 'x-leaf-peer-nonce',
  signature: 'x-leaf-peer-signature',
} as const;

/** How far a signed request's time may lie from the receiver's clock, either way. */
export const PEER_WINDOW_MS = 30_000;

/** Shortest cluster secret accepted (characters). */
export const MIN_CLUSTER_SECRET_LENGTH = 32;

/** Most cluster secrets accepted at once: the new and the old one during a rotation. */
export const MAX_CLUSTER_SECRETS = 2;

/** A cluster secret as the HMAC takes it. */
export function peerKey(secret: string): KeyObject {
  return createSecretKey(Buffer.from(secret, 'utf8'));
}

/**
 * HMAC-SHA256 of one request under `key`: method, path and query string exactly as sent
 * (`keys=a,b&counts=1,5`, without the `?`), the sender's time and the nonce, each on a line
 * of its own after a version label (a signature of one purpose never fits another).
 */
export function peerDigest(
  key: KeyObject,
  method: string,
  path: string,
  query: string,
  time: string,
  nonce: string,
): Buffer {
  return createHmac('sha256', key)
    .update(`leaf-peer-1\n${method}\n${path}\n${query}\n${time}\n${nonce}`)
    .digest();
}

/**
 * Signs the requests an instance sends to the others with the first cluster secret: the
 * headers of {@link PEER_HEADERS}. Nonces are a random prefix of this signer and a counter, so
 * no two requests of any instance share one.
 */
export class PeerSigner {
  private readonly key: KeyObject;
  private readonly prefix = randomBytes(12).toString('base64url');
  private counter = 0;

  constructor(
    secret: string,
    private readonly now: () => number,
  ) {
    this.key = peerKey(secret);
  }

  /** The headers that sign `method path?query` now (`query` without the `?`, `''` for none). */
  headers(method: string, path: string, query: string): Record<string, string> {
    const time = String(this.now());
    const nonce = `${this.prefix}${(this.counter++).toString(36)}`;
    return {
      [PEER_HEADERS.time]: time,
      [PEER_HEADERS.nonce]: nonce,
      [PEER_HEADERS.signature]: peerDigest(this.key, method, path, query, time, nonce).toString(
        'base64url',
      ),
    };
  }
}
