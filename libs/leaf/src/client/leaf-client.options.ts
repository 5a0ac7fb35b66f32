import { systemClock, type Clock } from '../core/clock';
import { LeafConfigurationError } from '../core/errors/leaf-configuration.error';
import { checkedInt, type Problems } from '../core/option-checks';
import type { LeafTransport } from './leaf-transport.port';

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
  /** Time source. @default systemClock */
  clock?: Clock;
  /** How requests are sent. @default NodeHttpTransport (node:http, keep-alive) */
  transport?: LeafTransport;
}

/** {@link LeafClientOptions} after defaults and validation. */
export interface ResolvedLeafClientOptions {
  readonly servers: readonly string[];
  readonly resolveServers: (() => Promise<string[]> | string[]) | null;
  readonly resolveIntervalMs: number;
  readonly requestTimeoutMs: number;
  readonly waitTimeoutMs: number;
  readonly backoffMs: number;
  readonly maxBackoffMs: number;
  readonly maxSockets: number;
  readonly maxBatchSize: number;
  readonly minRangeSize: number;
  readonly maxRangeSize: number;
  readonly rangeDurationMs: number;
  readonly preloadThreshold: number;
  readonly maxIdAgeMs: number;
  readonly clock: Clock;
  readonly transport: LeafTransport | null;
}

/**
 * Checks a server base URL: `http:` or `https:`, no query or fragment; returned without a
 * trailing slash. `null` (and a problem) otherwise.
 */
export function normalizeServerUrl(problems: Problems, url: unknown): string | null {
  try {
    if (typeof url !== 'string') throw new Error('not a string');
    const parsed = new URL(url);
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new Error('protocol');
    if (parsed.search || parsed.hash) throw new Error('query');
    return parsed.toString().replace(/\/+$/, '');
  } catch {
    problems.push(`servers: "${String(url)}" is not an http(s) base URL`);
    return null;
  }
}

/**
 * Applies defaults and validates.
 * @throws {LeafConfigurationError} listing every problem.
 */
export function resolveLeafClientOptions(raw: LeafClientOptions): ResolvedLeafClientOptions {
  const problems: Problems = [];
  const servers = (raw.servers ?? [])
    .map((url) => normalizeServerUrl(problems, url))
    .filter((url): url is string => url !== null);
  if (raw.servers !== undefined && !Array.isArray(raw.servers))
    problems.push('servers must be an array of base URLs');
  if (servers.length === 0 && !raw.resolveServers)
    problems.push('servers (a non-empty list of base URLs) or resolveServers is required');
  const segment = raw.segment ?? {};
  const minRangeSize = checkedInt(
    problems,
    'segment.minRangeSize',
    segment.minRangeSize,
    1000,
    1,
    2 ** 31 - 1,
  );
  const maxRangeSize = checkedInt(
    problems,
    'segment.maxRangeSize',
    segment.maxRangeSize,
    100_000,
    1,
    2 ** 31 - 1,
  );
  if (maxRangeSize < minRangeSize)
    problems.push(
      `segment.maxRangeSize (${maxRangeSize}) must be at least segment.minRangeSize (${minRangeSize})`,
    );
  const preloadThreshold = segment.preloadThreshold ?? 0.9;
  if (typeof preloadThreshold !== 'number' || !(preloadThreshold > 0 && preloadThreshold <= 1))
    problems.push(
      `segment.preloadThreshold must be a number in (0, 1] (got ${String(preloadThreshold)})`,
    );
  const resolved: ResolvedLeafClientOptions = {
    servers,
    resolveServers: raw.resolveServers ?? null,
    resolveIntervalMs: checkedInt(
      problems,
      'resolveIntervalMs',
      raw.resolveIntervalMs,
      30_000,
      100,
    ),
    requestTimeoutMs: checkedInt(problems, 'requestTimeoutMs', raw.requestTimeoutMs, 1000, 1),
    waitTimeoutMs: checkedInt(problems, 'waitTimeoutMs', raw.waitTimeoutMs, 5000, 1),
    backoffMs: checkedInt(problems, 'backoffMs', raw.backoffMs, 500, 1),
    maxBackoffMs: checkedInt(problems, 'maxBackoffMs', raw.maxBackoffMs, 5000, 1),
    maxSockets: checkedInt(problems, 'maxSockets', raw.maxSockets, 8, 1, 1024),
    maxBatchSize: checkedInt(problems, 'maxBatchSize', raw.maxBatchSize, 1000, 1, 1_000_000),
    minRangeSize,
    maxRangeSize,
    rangeDurationMs: checkedInt(
      problems,
      'segment.rangeDurationMs',
      segment.rangeDurationMs,
      60_000,
      1,
    ),
    preloadThreshold,
    maxIdAgeMs: checkedInt(problems, 'snowflake.maxIdAgeMs', raw.snowflake?.maxIdAgeMs, 1000, 1),
    clock: raw.clock ?? systemClock,
    transport: raw.transport ?? null,
  };
  if (problems.length > 0) throw new LeafConfigurationError(problems);
  return resolved;
}
