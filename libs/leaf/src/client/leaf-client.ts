import { NodeHttpTransport } from '../adapters/http/node-http.transport';
import { assertValidCount, assertValidKey } from '../core/arguments';
import { LeafError } from '../core/errors/leaf.error';
import { ShuttingDownError } from '../core/errors/shutting-down.error';
import type { IdDecodeOptions } from '../core/formats/id-codec';
import {
  ID_FORMAT_TABLE,
  type DecodedId,
  type IdFormat,
  type IdFormatEntry,
} from '../core/formats/id-format';
import { IdService, type IdTextsOptions, type LeafMode } from '../core/id.service';
import type { AllocatedRange } from '../core/segment/leaf-alloc-store.port';
import { SegmentBuffer, type SegmentBufferSnapshot } from '../core/segment/segment-buffer';
import { SegmentGenerator } from '../core/segment/segment-generator';
import type { SnowflakeTimeBounds } from '../core/snowflake/snowflake-time-bounds';
import {
  normalizeServerUrls,
  resolveLeafClientOptions,
  type LeafClientOptions,
  type ResolvedLeafClientOptions,
} from './leaf-client.options';
import type { LeafTransport } from '../core/http/leaf-transport.port';
import type { NumberMode } from '../core/numbers/number-format';
import {
  RemoteCaller,
  answerList,
  assertRemoteMode,
  decimal,
  noServerError,
  type RemoteMode,
} from './remote-caller';
import { RemoteGapless } from './remote-gapless';
import { RemoteIdTexts } from './remote-id-texts';
import { ServerPool, type ServerSnapshot } from './server-pool';

/** Counters and state of a {@link LeafClient}, for monitoring and tests. */
export interface LeafClientStats {
  /** Range requests sent (every attempt, failed ones and failovers included). */
  readonly rangeRequests: number;
  /** Ranges received (each used, or still cached, or abandoned at close). */
  readonly rangesReceived: number;
  /** Snowflake batch requests sent (every attempt). */
  readonly snowflakeRequests: number;
  readonly servers: ServerSnapshot[];
  readonly buffers: SegmentBufferSnapshot[];
}

interface SnowflakeWaiter {
  readonly count: number;
  resolve(ids: bigint[]): void;
  reject(error: unknown): void;
}

/**
 * The remote Leaf client (docs/client.md): the same {@link IdService} as `LeafModule`'s, served
 * from Leaf servers over HTTP.
 *
 * - **Segment** IDs come from ranges cached locally: per key, the server's double buffer
 *   ({@link SegmentBuffer}) over the range route. The next range is fetched in the background
 *   once 10 % of the current one is used; callers waiting for a range share one request; the
 *   range size follows the observed rate so that a range lasts `rangeDurationMs` (within
 *   `minRangeSize..maxRangeSize`). {@link getSync} and {@link generator} are synchronous while
 *   the buffer is warm. Each range request carries `after` = the end of the previous range,
 *   so a key's IDs increase even when the client moves between servers.
 * - **Snowflake** IDs are never cached: the calls of one event-loop turn are coalesced into
 *   one batch request per key, and an answer older than `maxIdAgeMs` is abandoned.
 * - **Servers**: a list or a resolver, keep-alive pools, per-request deadlines, failover with
 *   back-off ({@link ServerPool}, {@link RemoteCaller}); errors are the servers' own
 *   `LeafError` classes and codes.
 * - **Credentials**: with `token`, every request carries `Authorization: Bearer <token>`;
 *   a refused token is `UnauthorizedError` / `ForbiddenError`, a quota `RateLimitedError`.
 *
 * ```ts
 * const ids = new LeafClient({ servers: ['http://leaf-1:8080', 'http://leaf-2:8080'] });
 * const id: bigint = await ids.get('segment', 'order');
 * await ids.close();
 * ```
 */
export class LeafClient extends IdService {
  private readonly options: ResolvedLeafClientOptions;
  private readonly transport: LeafTransport;
  private readonly pool: ServerPool;
  private readonly caller: RemoteCaller;
  private readonly texts: RemoteIdTexts;
  /** Gapless series through the servers: `reserve`, `confirm`, `void` (docs/gapless.md). */
  readonly gapless: RemoteGapless;
  private readonly buffers = new Map<string, SegmentBuffer>();
  /** Per key: the end of the last range received (the next request's `after`). */
  private readonly rangeEnds = new Map<string, bigint>();
  private readonly pendingSnowflake = new Map<string, SnowflakeWaiter[]>();
  private resolving: Promise<void> | null = null;
  private resolvedAt: number | null = null;
  private closed = false;
  private readonly counts = { rangeRequests: 0, rangesReceived: 0, snowflakeRequests: 0 };

  /** @throws {LeafConfigurationError} listing every invalid option. */
  constructor(options: LeafClientOptions) {
    super();
    this.options = resolveLeafClientOptions(options);
    this.transport =
      this.options.transport ?? new NodeHttpTransport({ maxSockets: this.options.maxSockets });
    this.pool = new ServerPool(this.options.servers, this.options, this.options.clock);
    const transport = this.transport;
    this.caller = new RemoteCaller(
      this.pool,
      {
        get: (url, timeoutMs, headers) => {
          if (url.includes('/api/segment/range/')) this.counts.rangeRequests++;
          else this.counts.snowflakeRequests++;
          return transport.get(url, timeoutMs, headers);
        },
        ...(transport.post ? { post: transport.post.bind(transport) } : {}),
        close: () => transport.close(),
      },
      () => this.options.clock.now(),
      this.options.token === null ? undefined : { authorization: `Bearer ${this.options.token}` },
      this.options.requestTimeoutMs,
      // Range loads wait for servers themselves, and their buffers track them (see close).
      () => (this.closed ? Promise.reject(new ShuttingDownError()) : this.serversKnown()),
    );
    this.texts = new RemoteIdTexts(this.caller, this.options.maxBatchSize);
    this.gapless = new RemoteGapless(this.caller);
  }

  /**
   * One ID from `mode` for `key`: a segment ID from the local range (waiting up to
   * `waitTimeoutMs` for one when it is empty), a snowflake ID from the servers.
   * @throws {LeafError} the server's error (`TagNotFoundError`, `ModeDisabledError`, ...), or
   *   `SegmentNotReadyError` / `SnowflakeNotReadyError` when no server could serve.
   */
  get(mode: LeafMode, key: string): Promise<bigint> {
    try {
      if (mode === 'segment') return this.buffer(key).nextAsync();
      assertRemoteMode(mode);
      return this.remoteIds(mode, key, 1).then((ids) => ids[0]);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /**
   * `count` IDs from `mode` for `key`, increasing.
   * @throws {InvalidArgumentError} unless `count` is an integer in 1..maxBatchSize.
   * @throws {LeafError} as {@link get}.
   */
  getIds(mode: LeafMode, key: string, count: number): Promise<bigint[]> {
    try {
      assertValidCount(count, this.options.maxBatchSize);
      if (mode === 'segment') return this.buffer(key).take(count);
      assertRemoteMode(mode);
      return this.remoteIds(mode, key, count);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /**
   * {@link IdService.getTexts}: the numeric forms written here from {@link getIds}' IDs; the
   * formats made from snowflake IDs (the servers alone know their layout) and the keyed ones
   * (they hold the keys) by the servers, one request.
   */
  override getTexts(
    mode: LeafMode,
    key: string,
    count: number,
    format: IdFormat,
    options: IdTextsOptions = {},
  ): Promise<string[]> {
    const entry: IdFormatEntry | undefined = ID_FORMAT_TABLE[format];
    return entry !== undefined && (entry.snowflake || entry.keyed)
      ? this.texts.madeByServers(entry, mode, key, count, options.prefix ?? '')
      : super.getTexts(mode, key, count, format, options);
  }

  /** {@link IdService.snowflakeBounds} with the servers' layout (the ends checked here first). */
  override snowflakeBounds(from: number | Date, to = from): Promise<SnowflakeTimeBounds> {
    return this.texts.snowflakeBounds(from, to);
  }

  /** {@link IdService.encode} by a server, which holds the keys (`GET /api/encode/{format}`). */
  override encode(ids: readonly bigint[], format: IdFormat): Promise<string[]> {
    return this.texts.encode(ids, format);
  }

  /** {@link IdService.decode} by a server, which holds the keys (`GET /api/decode/{text}`). */
  override decode(text: string, options?: IdDecodeOptions): Promise<DecodedId> {
    return this.texts.decode(text, options);
  }

  /**
   * The next segment ID of `key`, synchronously: succeeds while its local range is warm.
   * @throws {SegmentNotReadyError} when no range is in memory (a fetch has been started).
   * @throws {InvalidArgumentError} for a malformed key; {@link ShuttingDownError} after close.
   */
  getSync(key: string): bigint {
    return this.buffer(key).nextSync();
  }

  /** A handle for one segment key that skips the key lookup on every call. */
  generator(key: string): SegmentGenerator {
    return new SegmentGenerator(this.buffer(key));
  }

  /** `count` business numbers of `tag` (docs/formats.md), one request; `mode` is the format's. */
  businessNumbers(mode: NumberMode, tag: string, count = 1): Promise<string[]> {
    return this.texts.businessNumbers(mode, tag, count);
  }

  /** Fetches the first range of each key now instead of on its first call. */
  async warm(keys: readonly string[]): Promise<void> {
    await Promise.all(keys.map((key) => this.buffer(key).warm()));
  }

  /** Counters and state, for monitoring and tests. */
  stats(): LeafClientStats {
    return {
      ...this.counts,
      servers: this.pool.snapshot(),
      buffers: [...this.buffers.values()].map((buffer) => buffer.snapshot()),
    };
  }

  /**
   * Stops serving (every later call is `ShuttingDownError`), waits for requests in flight and
   * closes the connection pools. IDs still cached are abandoned (a gap). Never throws.
   */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const buffer of this.buffers.values()) buffer.seal();
    const settle = (p: Promise<unknown> | null) => p?.catch(() => undefined);
    await Promise.all([
      ...[...this.buffers.values()].map((buffer) => settle(buffer.pendingLoad)),
      this.caller.settled(),
      settle(this.resolving),
    ]);
    if (this.options.transport === null) this.transport.close();
  }

  private buffer(key: string): SegmentBuffer {
    const known = this.buffers.get(key);
    if (known) return known;
    assertValidKey(key);
    if (this.closed) throw new ShuttingDownError();
    const o = this.options;
    const buffer = new SegmentBuffer(
      key,
      (tag, step) => this.loadRange(tag, step),
      {
        preloadThreshold: o.preloadThreshold,
        loadTimeoutMs: o.waitTimeoutMs,
        retryBackoffMs: Math.min(o.backoffMs, o.waitTimeoutMs),
        stepDurationMs: o.rangeDurationMs,
        maxStep: o.maxRangeSize,
      },
      o.clock,
    );
    this.buffers.set(key, buffer);
    return buffer;
  }

  /**
   * The buffer's range loader: one range request (with failover),
   * `GET /api/segment/range/{tag}?count=N[&after=M]` with `after` the end of the previous range,
   * answered `{"start","end"}` (decimal strings); a range of another size, or starting below
   * `after`, is a protocol error (the server is failed over).
   */
  private async loadRange(tag: string, step: number | undefined): Promise<AllocatedRange> {
    const o = this.options;
    const count = Math.min(o.maxRangeSize, Math.max(o.minRangeSize, step ?? o.minRangeSize));
    await this.serversKnown();
    const after = this.rangeEnds.get(tag);
    const range = await this.caller.request({
      path:
        `/api/segment/range/${encodeURIComponent(tag)}?count=${count}` +
        (after === undefined ? '' : `&after=${after}`),
      context: { mode: 'segment', key: tag },
      timeoutMs: o.requestTimeoutMs,
      decode: (body) => {
        const { start, end } = JSON.parse(body) as { start?: unknown; end?: unknown };
        const answer = { start: decimal(start), end: decimal(end) };
        if (
          answer.end - answer.start !== BigInt(count) ||
          (after !== undefined && answer.start < after)
        ) {
          throw new Error(
            `range [${answer.start}, ${answer.end}) does not answer count=${count} after=${after}`,
          );
        }
        return answer;
      },
    });
    this.rangeEnds.set(tag, range.end);
    this.counts.rangesReceived++;
    return { tag, maxId: range.end, baseStep: o.minRangeSize, appliedStep: count };
  }

  /**
   * Queues a snowflake or sequence request; the calls of one event-loop turn share one batch
   * per mode and key. Every call of a batch is in flight until the answer, so splitting it in
   * call order keeps sequence mode's real-time order (docs/design.md, "Sequence mode").
   */
  private remoteIds(mode: RemoteMode, key: string, count: number): Promise<bigint[]> {
    assertValidKey(key);
    if (this.closed) return Promise.reject(new ShuttingDownError());
    const slot = `${mode}/${key}`;
    // A batch in the map is never empty: its first call is pushed below, synchronously.
    const batch = this.pendingSnowflake.get(slot) ?? [];
    if (batch.length === 0) {
      this.pendingSnowflake.set(slot, batch);
      setImmediate(() => this.flushRemote(mode, key, batch));
    }
    return new Promise<bigint[]>((resolve, reject) => batch.push({ count, resolve, reject }));
  }

  private flushRemote(mode: RemoteMode, key: string, waiters: SnowflakeWaiter[]): void {
    this.pendingSnowflake.delete(`${mode}/${key}`);
    // Chunks of at most maxBatchSize IDs (each waiter asked for at most that many).
    let chunk: SnowflakeWaiter[] = [];
    let size = 0;
    for (const waiter of waiters) {
      if (size + waiter.count > this.options.maxBatchSize) {
        this.sendRemote(mode, key, chunk, size);
        chunk = [];
        size = 0;
      }
      chunk.push(waiter);
      size += waiter.count;
    }
    if (chunk.length > 0) this.sendRemote(mode, key, chunk, size);
  }

  private sendRemote(
    mode: RemoteMode,
    key: string,
    waiters: SnowflakeWaiter[],
    count: number,
  ): void {
    void this.caller
      .send({
        path: `/api/${mode}/ids/${encodeURIComponent(key)}?count=${count}`,
        context: { mode, key },
        timeoutMs: Math.min(this.options.requestTimeoutMs, this.options.maxIdAgeMs),
        decode: (body) =>
          answerList<unknown>(body, 'ids', count, () => true, 'wrong number of IDs').map(decimal),
      })
      .then(
        (ids) => {
          let at = 0;
          for (const waiter of waiters) {
            waiter.resolve(ids.slice(at, at + waiter.count));
            at += waiter.count;
          }
        },
        (error: unknown) => {
          const failure = error instanceof LeafError ? error : noServerError(mode, key, error);
          for (const waiter of waiters) waiter.reject(failure);
        },
      );
  }

  /**
   * Runs the resolver when it is due (in the background), and waits for it only while no
   * server is known. A failing resolver keeps the last list.
   */
  private async serversKnown(): Promise<void> {
    const resolve = this.options.resolveServers;
    if (!resolve) return;
    const now = this.options.clock.now();
    if (
      this.resolving === null &&
      (this.resolvedAt === null || now - this.resolvedAt >= this.options.resolveIntervalMs)
    ) {
      this.resolving = (async () => {
        try {
          // Called a microtask later, so that a resolver throwing at once still clears
          // `resolving` (below) after it was set.
          const urls = normalizeServerUrls([], await Promise.resolve().then(resolve));
          if (urls.length > 0) this.pool.replace(urls);
        } catch {
          // Keep the last list; the next request after resolveIntervalMs tries again.
        } finally {
          this.resolvedAt = this.options.clock.now();
          this.resolving = null;
        }
      })();
    }
    if (this.pool.empty && this.resolving) await this.resolving;
  }
}
