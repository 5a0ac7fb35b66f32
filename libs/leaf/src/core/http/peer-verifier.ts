import { timingSafeEqual, type KeyObject } from 'node:crypto';
import { PEER_HEADERS, PEER_WINDOW_MS, peerDigest, peerKey } from './peer-signature';
import { ReplayMemory } from './replay-memory';

/** Nonces remembered at most (about 12 MB of heap when full): see {@link ReplayMemory}. */
export const PEER_REPLAY_CAPACITY = 200_000;

/** A request as the verifier reads it: the method, the URL as received, the headers. */
export interface PeerRequest {
  readonly method: string;
  /** Path and query string exactly as received (`/api/…?keys=…`). */
  readonly url: string;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
}

/**
 * Why a request was taken or refused: `ok`, or no credential (`missing`), a malformed one, a
 * time outside the window (`expired`), a signature no accepted secret gives (`forged`), a
 * request seen before (`replayed`). The caller answers every refusal alike.
 */
export type PeerVerdict = 'ok' | 'missing' | 'malformed' | 'expired' | 'forged' | 'replayed';

const TIME = /^\d{1,15}$/;
const NONCE = /^[A-Za-z0-9_-]{8,64}$/;
/** 32 bytes of HMAC-SHA256 in base64url, unpadded. */
const SIGNATURE = /^[A-Za-z0-9_-]{43}$/;

/**
 * Checks the signature of a request between instances (docs/security.md, "Peers"): made
 * with any of the accepted cluster secrets (the new and the old one during a rotation),
 * within {@link PEER_WINDOW_MS} of this instance's clock, and never seen before. Each secret
 * is tried, in constant time, whatever the outcome of the others.
 */
export class PeerVerifier {
  private readonly keys: readonly KeyObject[];
  private readonly seen: ReplayMemory;

  constructor(
    secrets: readonly string[],
    private readonly now: () => number,
    options: { readonly capacity?: number } = {},
  ) {
    if (secrets.length === 0) throw new Error('PeerVerifier needs at least one secret');
    this.keys = secrets.map(peerKey);
    this.seen = new ReplayMemory(PEER_WINDOW_MS, options.capacity ?? PEER_REPLAY_CAPACITY);
  }

  /** Nonces remembered now (bounded by the capacity). */
  get remembered(): number {
    return this.seen.size;
  }

  /** The verdict on `request`; an `ok` request is remembered, so the same one again is `replayed`. */
  verify(request: PeerRequest): PeerVerdict {
    const time = request.headers[PEER_HEADERS.time];
    const nonce = request.headers[PEER_HEADERS.nonce];
    const signature = request.headers[PEER_HEADERS.signature];
    if (time === undefined && nonce === undefined && signature === undefined) return 'missing';
    if (
      typeof time !== 'string' ||
      typeof nonce !== 'string' ||
      typeof signature !== 'string' ||
      !TIME.test(time) ||
      !NONCE.test(nonce) ||
      !SIGNATURE.test(signature)
    ) {
      return 'malformed';
    }
    const now = this.now();
    const timeMs = Number(time);
    if (Math.abs(now - timeMs) > PEER_WINDOW_MS) return 'expired';
    const question = request.url.indexOf('?');
    const path = question < 0 ? request.url : request.url.slice(0, question);
    const query = question < 0 ? '' : request.url.slice(question + 1);
    const given = Buffer.from(signature, 'base64url');
    let match = false;
    for (const key of this.keys) {
      const expected = peerDigest(key, request.method, path, query, time, nonce);
      // No early exit: the time taken says nothing about which secret signed.
      match = timingSafeEqual(expected, given) || match;
    }
    if (!match) return 'forged';
    return this.seen.admit(nonce, timeMs, now) ? 'ok' : 'replayed';
  }
}
