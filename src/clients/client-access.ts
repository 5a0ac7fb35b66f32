import { hash } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { ForbiddenError, RateLimitedError, UnauthorizedError } from 'nestjs-leaf/errors';
import type { ClientDefinition, ClientMode } from './client-definitions';
import { TokenBucket } from './token-bucket';

/** Injection token of the application's {@link ClientAccess} (provided only with client tokens). */
export const CLIENT_ACCESS = Symbol('CLIENT_ACCESS');

interface Client {
  readonly definition: ClientDefinition;
  readonly bucket: TokenBucket | null;
}

/**
 * The clients of `LEAF_CLIENT_TOKENS` at run time: who a bearer token is, what it may use, and
 * its quota (one token bucket per configured client, counted in IDs, in this instance only;
 * nothing is kept per caller-chosen name). A token is found by its SHA-256 in a `Map`: the
 * work is the same for every token, and a timing difference of the lookup could only tell an
 * attacker about a hash, whose preimage it cannot choose.
 *
 * A token that matched is then remembered as it was presented, so a client's next requests
 * skip the SHA-256 (most of the check's cost). Only matched tokens enter that map, so a stranger
 * cannot grow it: it holds at most one entry per client (a digest has one known preimage), and
 * never more than there are clients. Looking a presented token up in it by value is acceptable:
 * V8 compares the string's hash (seeded at random per process) before any character, so a
 * guess's time depends on its own length and hash, and on a stored token's characters only
 * for a guess whose 32-bit seeded hash equals that token's — which tells nothing an attacker
 * can steer towards the token; a miss still costs the full SHA-256.
 */
export class ClientAccess {
  private readonly clients: ReadonlyMap<string, Client>;
  /** Presented tokens that matched a client (at most one per client; see the class). */
  private readonly verified = new Map<string, Client>();

  constructor(
    definitions: readonly ClientDefinition[],
    private readonly now: () => number = () => performance.now(),
  ) {
    const start = now();
    this.clients = new Map(
      definitions.map((definition) => [
        definition.sha256,
        {
          definition,
          bucket:
            definition.quota === null
              ? null
              : new TokenBucket(definition.quota.idsPerSecond, definition.quota.burst, start),
        },
      ]),
    );
  }

  /** How many presented tokens are remembered (at most the number of clients). */
  get rememberedTokens(): number {
    return this.verified.size;
  }

  /**
   * Admits a request of `cost` IDs on `mode` (`null`: a route of no mode) for `tag` (`null`: a
   * route without a key) by the bearer `token`, taking `cost` from its quota; checked in this
   * order, each before anything is allocated.
   * @returns the client.
   * @throws {UnauthorizedError} no token, or one no client has (401).
   * @throws {ForbiddenError} the client may not use the mode or the tag, or `cost` exceeds its
   *   burst (no wait would make it fit) (403).
   * @throws {RateLimitedError} over its quota now; nothing was taken (429, `retryAfterMs`).
   */
  admit(
    token: string | null,
    mode: ClientMode | null,
    tag: string | null,
    cost: number,
  ): ClientDefinition {
    if (token === null) {
      throw new UnauthorizedError(
        'this route needs an Authorization: Bearer <client token> header (LEAF_CLIENT_TOKENS)',
      );
    }
    let client = this.verified.get(token);
    if (client === undefined) {
      client = this.clients.get(hash('sha256', token, 'hex'));
      if (client === undefined) throw new UnauthorizedError('the bearer token is not valid');
      if (this.verified.size < this.clients.size) this.verified.set(token, client);
    }
    const { definition, bucket } = client;
    if (mode !== null && !definition.modes.has(mode)) {
      throw new ForbiddenError(`client "${definition.name}" may not use ${mode} mode`);
    }
    if (tag !== null && !definition.tags.matches(tag)) {
      throw new ForbiddenError(`client "${definition.name}" may not use this tag`);
    }
    if (bucket !== null && cost > 0) {
      if (cost > bucket.burst) {
        throw new ForbiddenError(
          `client "${definition.name}" may take at most ${bucket.burst} IDs in one request (its burst)`,
        );
      }
      const waitMs = bucket.take(cost, this.now());
      if (waitMs > 0) {
        throw new RateLimitedError(
          `client "${definition.name}" is over its quota of ${bucket.perSecond} IDs per second (burst ${bucket.burst}) on this instance`,
          waitMs,
        );
      }
    }
    return definition;
  }
}
