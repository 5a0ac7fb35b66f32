import { GaplessBusyError } from '../core/errors/gapless.error';
import { InvalidArgumentError } from '../core/errors/invalid-argument.error';
import { LeafConfigurationError } from '../core/errors/leaf-configuration.error';
import type { LeafError } from '../core/errors/leaf.error';
import { SegmentNotReadyError } from '../core/errors/segment-not-ready.error';
import { SequenceNoIssuerError } from '../core/errors/sequence.error';
import { SnowflakeNotReadyError } from '../core/errors/snowflake-not-ready.error';
import type { LeafMode } from '../core/id.service';
import { leafErrorFromBody, type RemoteRequestContext } from '../core/errors/leaf-error-from-body';
import type { LeafTransport, TransportAnswer } from '../core/http/leaf-transport.port';
import type { ServerPool } from './server-pool';

/** One request of the client: where, with which deadline, and how to read a 200 answer. */
export interface RemoteRequest<T> {
  /** Path and query, e.g. `/api/segment/range/order?count=1000`. */
  readonly path: string;
  /** A JSON body: the request is a `POST` (gapless series' calls, each idempotent). */
  readonly body?: string;
  readonly context: RemoteRequestContext;
  readonly timeoutMs: number;
  /** Reads a 200 body; throws when it is not what the route answers (a protocol error). */
  readonly decode: (body: string) => T;
}

/**
 * Sends a request to the pool's servers in turn until one answers (docs/client.md,
 * "Failover"):
 *
 * - a 200 whose body decodes is the answer;
 * - a Leaf error the caller caused (4xx: invalid argument, unknown tag, mode disabled, a
 *   missing or refused client token) is thrown as the same `LeafError` class and code at
 *   once: another server would say the same. A 429 (`RateLimitedError`, the client's own
 *   quota, with the server's `Retry-After` as `retryAfterMs`) is thrown at once too and the
 *   server stays up: it answered, and hopping to the next instance would only spend the
 *   quota the operator set there as well;
 * - a 5xx, a timeout, a refused connection or an undecodable body marks the server down
 *   (back-off) and the next server is asked. When none answers, the last server's own error
 *   is thrown (for example `LEAF_ALLOCATION_FAILED` when the database is down), or
 *   the mode's {@link noServerError} when no server answered at all;
 * - while every server is within its back-off, requests fail at once with that error
 *   (no request is sent): an outage costs one attempt per server per back-off period.
 *
 * A request that timed out is abandoned: if the server allocated a range for it, that range
 * is a gap, never used. Requests made with {@link send} are counted in flight until they
 * settle, so that the client's `close()` can wait for them ({@link settled}).
 */
export class RemoteCaller {
  private readonly requests = new Set<Promise<unknown>>();

  /**
   * @param headers sent with every request (the client token's `authorization`); never
   *   logged or put in an error.
   * @param ready resolves once a server is known; rejects with `ShuttingDownError` once the
   *   client is closed.
   */
  constructor(
    private readonly pool: ServerPool,
    private readonly transport: LeafTransport,
    private readonly now: () => number,
    private readonly headers: Readonly<Record<string, string>> | undefined,
    readonly requestTimeoutMs: number,
    private readonly ready: () => Promise<void>,
  ) {}

  /** Resolves once every request sent so far has settled. Never rejects. */
  async settled(): Promise<void> {
    await Promise.all([...this.requests]);
  }

  /**
   * Sends `request` (by default with the client's request timeout) once a server is known,
   * counted in flight until it settles.
   * @throws {ShuttingDownError} once the client is closed; the request's own errors.
   */
  async send<T>(
    request: Omit<RemoteRequest<T>, 'timeoutMs'> & { readonly timeoutMs?: number },
  ): Promise<T> {
    await this.ready();
    const answer = this.request({ timeoutMs: this.requestTimeoutMs, ...request });
    const settled = answer.catch(() => undefined);
    this.requests.add(settled);
    void settled.finally(() => this.requests.delete(settled));
    return answer;
  }

  /** One request with failover, as above (neither waiting for a server nor counted). */
  async request<T>(request: RemoteRequest<T>): Promise<T> {
    let serverError: LeafError | null = null;
    let lastFailure: unknown = this.lastFailure ?? new Error('no Leaf server is configured');
    const { body: sent, path, context } = request;
    const unavailable = (cause: unknown) =>
      noServerError(context.mode, context.key, cause, this.requestTimeoutMs);
    if (sent !== undefined && !this.transport.post)
      throw new LeafConfigurationError([
        'the client transport has no post(): gapless series need it (NodeHttpTransport has it)',
      ]);
    const candidates = this.pool.candidates();
    // Every server failed within its back-off: fail fast, without a request, until the first
    // back-off ends (at most one attempt per server per back-off period in an outage).
    if (candidates.length > 0 && candidates.every((server) => server.downUntil > this.now())) {
      throw unavailable(lastFailure);
    }
    for (const server of candidates) {
      let answer: TransportAnswer;
      try {
        answer = await (sent === undefined
          ? this.transport.get(server.url + path, request.timeoutMs, this.headers)
          : this.transport.post!(server.url + path, sent, request.timeoutMs, this.headers));
        if (answer.status === 200) {
          const value = request.decode(answer.body);
          this.pool.succeeded(server);
          return value;
        }
      } catch (error) {
        // Unreachable, timed out, or a 200 whose body does not decode.
        this.pool.failed(server);
        lastFailure = error;
        continue;
      }
      const { status, body, retryAfter } = answer;
      const error = leafErrorFromBody(status, body, context, retryAfter);
      if (error && status >= 400 && status < 500) {
        this.pool.succeeded(server);
        throw error;
      }
      this.pool.failed(server);
      if (error) serverError = error;
      lastFailure = error ?? new Error(`${server.url} answered HTTP ${status}`);
    }
    this.lastFailure = serverError ?? lastFailure;
    throw serverError ?? unavailable(lastFailure);
  }

  /** The cause of the last request that no server answered. */
  private lastFailure: unknown = null;
}

// What the remote client checks of a caller's mode and of a server's IDs.

const DECIMAL = /^\d{1,19}$/;

/** The modes served by the servers on every call (no local cache). */
export type RemoteMode = 'snowflake' | 'sequence';

/** A mode from an untyped caller: anything but the three modes is the caller's mistake. */
export function assertRemoteMode(mode: unknown): asserts mode is RemoteMode {
  if (mode !== 'snowflake' && mode !== 'sequence') {
    throw new InvalidArgumentError('mode must be "segment", "snowflake" or "sequence"', 'mode');
  }
}

/**
 * What a call of `mode` fails with when no server answered: the error the mode's servers
 * answer when they cannot serve (`SegmentNotReadyError`, `SnowflakeNotReadyError`,
 * `SequenceNoIssuerError`; a gapless series' `GaplessBusyError` after `waitMs`).
 */
export function noServerError(
  mode: LeafMode | 'gapless',
  key: string,
  cause: unknown,
  waitMs = 0,
): LeafError {
  switch (mode) {
    case 'gapless':
      return new GaplessBusyError(key, waitMs, { cause });
    case 'segment':
      return new SegmentNotReadyError(key, { cause });
    case 'sequence':
      return new SequenceNoIssuerError(key, 'no server answered', { cause });
    default:
      return new SnowflakeNotReadyError({ cause });
  }
}

/** A decimal ID of a server's answer; throws (the caller then fails that server over) otherwise. */
export function decimal(value: unknown): bigint {
  if (typeof value !== 'string' || !DECIMAL.test(value)) throw new Error('not a decimal ID');
  return BigInt(value);
}

/**
 * The list `field` of a server's JSON answer, `count` items each `valid`; throws `message`
 * (the caller then fails that server over) otherwise.
 */
export function answerList<T = string>(
  body: string,
  field: string,
  count: number,
  valid: (item: unknown) => boolean,
  message: string,
): T[] {
  const list = (JSON.parse(body) as Record<string, unknown>)[field];
  if (!Array.isArray(list) || list.length !== count || !list.every(valid)) throw new Error(message);
  return list as T[];
}

/** Whether a server's answer holds a non-empty text. */
export const isText = (item: unknown): boolean => typeof item === 'string' && item.length > 0;
