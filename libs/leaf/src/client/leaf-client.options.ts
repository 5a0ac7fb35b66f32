import { systemClock, type Clock } from '../core/clock';
import { LeafConfigurationError } from '../core/errors/leaf-configuration.error';
import { LEAF_OPTION_RULES } from '../core/leaf-option-rules';
import {
  checkedRule,
  ruleProblem,
  type IntegerRule,
  type OptionRule,
  type Problems,
} from '../core/option-rule';
import type { LeafTransport } from '../core/http/leaf-transport.port';

/** Options of a {@link LeafClient} (and of `LeafClientModule`). Every field but the servers is optional. */
export interface LeafClientOptions {
  /**
   * Base URLs of the Leaf servers, e.g. `['http://10.0.0.1:8080', 'http://10.0.0.2:8080']`.
   * Required unless `resolveServers` is given.
   */
  servers?: string[];
  /**
   * Service discovery: returns the current base URLs. Called before the first request and
   * then every `resolveIntervalMs` (in the background; the last list stays on failure).
   */
  resolveServers?: () => Promise<string[]> | string[];
  /** @default 30000 */
  resolveIntervalMs?: number;
  /**
   * Deadline of one HTTP request. A range request past it is abandoned (its range, if the
   * server allocated one, is a gap) and the next server is asked.
   * @default 1000
   */
  requestTimeoutMs?: number;
  /**
   * How long a caller of `get`/`getIds` waits for a range when the local buffer is empty
   * (across failover), before `SegmentNotReadyError`.
   * @default 5000
   */
  waitTimeoutMs?: number;
  /** First pause before a failed server is asked again; doubles per failure. @default 500 */
  backoffMs?: number;
  /**
   * Longest pause before a failed server is asked again; also how long an outage of every
   * server may outlast its end before the client notices. @default 5000
   */
  maxBackoffMs?: number;
  /** Keep-alive connections per server. @default 8 */
  maxSockets?: number;
  /** Largest `count` of `getIds`. @default 1000 */
  maxBatchSize?: number;
  /** Segment mode: ranges cached locally. */
  segment?: {
    /** Size of the first ranges, and the least the dynamic size goes down to. @default 1000 */
    minRangeSize?: number;
    /**
     * Largest range size; at most the servers' `LEAF_MAX_RANGE` (`segment.maxRangeCount`).
     * @default 100000
     */
    maxRangeSize?: number;
    /**
     * Target lifetime of one range: a range used up faster doubles the size, one that lasted
     * over twice as long halves it (Leaf's dynamic step, on the client).
     * @default 60000
     */
    rangeDurationMs?: number;
    /**
     * The next range is fetched once the current one's remaining IDs fall below this fraction
     * of its size. @default 0.9 (after 10 % is used, as the server's segments)
     */
    preloadThreshold?: number;
  };
  /** Snowflake mode: batched, never cached. */
  snowflake?: {
    /**
     * Oldest an ID may be when it reaches a caller: a batch request that takes longer is
     * abandoned and asked of the next server, so an ID's timestamp is never older than this.
     * @default 1000
     */
    maxIdAgeMs?: number;
  };
  /**
   * The client token the servers know this client by (`LEAF_CLIENT_TOKENS` on the server,
   * docs/security.md, "Callers"), sent as `Authorization: Bearer <token>` on every request.
   * Validated (16..1024 characters of the bearer-token alphabet), never logged nor put in an
   * error message. @default none: no `Authorization` header (servers without client tokens)
   */
  token?: string;
  /** Time source. @default systemClock */
  clock?: Clock;
  /** How requests are sent. @default NodeHttpTransport (node:http, keep-alive) */
  transport?: LeafTransport;
}

/** {@link LeafClientOptions} after defaults and validation (`token`: `null` = none). */
export type ResolvedLeafClientOptions = Readonly<ReturnType<typeof resolveLeafClientOptions>>;

/**
 * Checks server base URLs: `http:` or `https:`, no query or fragment; each returned without a
 * trailing slash. Any other is left out, with a problem.
 */
export function normalizeServerUrls(problems: Problems, urls: readonly unknown[]): string[] {
  return urls.flatMap((url) => {
    try {
      if (typeof url !== 'string') throw new Error('not a string');
      const parsed = new URL(url);
      if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new Error('protocol');
      if (parsed.search || parsed.hash) throw new Error('query');
      return [parsed.toString().replace(/\/+$/, '')];
    } catch {
      problems.push(`servers: "${String(url)}" is not an http(s) base URL`);
      return [];
    }
  });
}

const MAX_INT32 = 2 ** 31 - 1;
/** An integer option in `min..max` (no bound above by default). */
const int = (
  min: number,
  def: number,
  doc: string,
  max = Number.MAX_SAFE_INTEGER,
): IntegerRule => ({ type: 'integer', default: def, min, max, doc });

/**
 * Every option of {@link LeafClientOptions} with its default and range, written once: the
 * resolver applies them and docs/configuration.md lists them. The batch cap and the preload
 * threshold are the server's own rules.
 */
export const LEAF_CLIENT_OPTION_RULES = {
  resolveIntervalMs: int(100, 30_000, 'How often `resolveServers` is asked again.'),
  requestTimeoutMs: int(1, 1000, 'Deadline of one request to one server.'),
  waitTimeoutMs: int(1, 5000, 'How long a call waits for IDs (across failovers) before it fails.'),
  backoffMs: int(1, 500, 'First pause before a failed server is asked again; doubles per failure.'),
  maxBackoffMs: int(1, 5000, 'Longest pause before a failed server is asked again.'),
  maxSockets: int(1, 8, 'Keep-alive connections per server.', 1024),
  maxBatchSize: LEAF_OPTION_RULES.maxBatchSize,
  'segment.minRangeSize': int(1, 1000, 'The smallest range size.', MAX_INT32),
  'segment.maxRangeSize': {
    ...int(1, 100_000, 'Largest range the client takes at once.', MAX_INT32),
    rangeNote: 'at least `segment.minRangeSize`, at most the server’s `LEAF_MAX_RANGE`',
  },
  'segment.rangeDurationMs': int(1, 60_000, 'Target lifetime of one range (the dynamic size).'),
  'segment.preloadThreshold': LEAF_OPTION_RULES['segment.preloadThreshold'],
  token: {
    type: 'string',
    default: null,
    defaultNote: 'none',
    // RFC 6750's b64token: what fits an Authorization header as is.
    pattern: /^[A-Za-z0-9\-._~+/]{16,1024}=*$/,
    rangeNote: '16..1024 characters of `A-Z a-z 0-9 - . _ ~ + /` (then `=` padding)',
    doc: 'Client token sent as a bearer token; never logged.',
  },
  'snowflake.maxIdAgeMs': int(
    1,
    1000,
    'Oldest a snowflake ID may be when handed out (the request deadline).',
  ),
} as const satisfies Record<string, OptionRule>;

/** The path of an option in {@link LEAF_CLIENT_OPTION_RULES}. */
export type LeafClientOptionPath = keyof typeof LEAF_CLIENT_OPTION_RULES;

/** The client token, checked without ever echoing it (a secret). */
function clientToken(problems: Problems, token: unknown): string | null {
  if (token === undefined) return null;
  const problem = ruleProblem(LEAF_CLIENT_OPTION_RULES.token, token);
  if (problem !== null) problems.push(`token must be ${problem} (the value is not shown)`);
  return problem === null ? (token as string) : null;
}

/** Applies defaults and validates. @throws {LeafConfigurationError} listing every problem. */
export function resolveLeafClientOptions(raw: LeafClientOptions) {
  const problems: Problems = [];
  const servers = normalizeServerUrls(problems, Array.isArray(raw.servers) ? raw.servers : []);
  if (raw.servers !== undefined && !Array.isArray(raw.servers))
    problems.push('servers must be an array of base URLs');
  if (servers.length === 0 && !raw.resolveServers)
    problems.push('servers (a non-empty list of base URLs) or resolveServers is required');
  const segment = raw.segment ?? {};
  const check = (path: LeafClientOptionPath, value: unknown) =>
    checkedRule<number>(problems, path, LEAF_CLIENT_OPTION_RULES[path], value);
  const minRangeSize = check('segment.minRangeSize', segment.minRangeSize);
  const maxRangeSize = check('segment.maxRangeSize', segment.maxRangeSize);
  if (maxRangeSize < minRangeSize)
    problems.push(
      `segment.maxRangeSize (${maxRangeSize}) must be at least segment.minRangeSize (${minRangeSize})`,
    );
  const resolved = {
    servers,
    resolveServers: raw.resolveServers ?? null,
    resolveIntervalMs: check('resolveIntervalMs', raw.resolveIntervalMs),
    requestTimeoutMs: check('requestTimeoutMs', raw.requestTimeoutMs),
    waitTimeoutMs: check('waitTimeoutMs', raw.waitTimeoutMs),
    backoffMs: check('backoffMs', raw.backoffMs),
    maxBackoffMs: check('maxBackoffMs', raw.maxBackoffMs),
    maxSockets: check('maxSockets', raw.maxSockets),
    maxBatchSize: check('maxBatchSize', raw.maxBatchSize),
    minRangeSize,
    maxRangeSize,
    rangeDurationMs: check('segment.rangeDurationMs', segment.rangeDurationMs),
    preloadThreshold: check('segment.preloadThreshold', segment.preloadThreshold),
    maxIdAgeMs: check('snowflake.maxIdAgeMs', raw.snowflake?.maxIdAgeMs),
    token: clientToken(problems, raw.token),
    clock: raw.clock ?? systemClock,
    transport: raw.transport ?? null,
  };
  if (problems.length > 0) throw new LeafConfigurationError(problems);
  return resolved;
}
