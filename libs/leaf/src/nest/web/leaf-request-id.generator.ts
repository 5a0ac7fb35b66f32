import { SnowflakeNotReadyError } from '../../core/errors/snowflake-not-ready.error';
import { LeafConfigurationError } from '../../core/errors/leaf-configuration.error';
import { LeafError } from '../../core/errors/leaf.error';

/** What the generator needs of `SnowflakeService`: its synchronous path. */
export interface SyncSnowflakeSource {
  getSync(key?: string): bigint;
}

/** Options of {@link LeafRequestIdGenerator}. */
export interface LeafRequestIdOptions {
  /**
   * What a request gets when snowflake cannot issue an ID without waiting (not started yet,
   * the time lease lapsed, the clock behind, this millisecond's sequence used up, or no
   * `SnowflakeService` attached yet). Required, so that the choice is explicit:
   *
   * - `'throw'`: the `LeafError` (`SnowflakeNotReadyError`, `LEAF_SNOWFLAKE_NOT_READY`, or
   *   the service's own) propagates. Under nestjs-cls's middleware the request is answered
   *   with it (503 through `LeafExceptionFilter`). For applications where a request must not
   *   run without a time-ordered ID. Not allowed for Fastify's `genReqId`
   *   ({@link LeafRequestIdGenerator.forFastify}): a throw there leaves the request unanswered.
   * - a function: called with the error, its return value is the request's ID. Make it
   *   recognisable as not a snowflake (for example `` `u-${randomUUID()}` ``), and count or log
   *   it: the request proceeds, with an ID that does not tell when it arrived.
   */
  readonly onUnavailable: 'throw' | ((error: LeafError) => string);
  /** The snowflake key (`SnowflakeService.getSync(key)`). @default none */
  readonly key?: string;
}

/**
 * Request IDs from snowflake IDs (decimal strings), so that a request's ID tells when it
 * arrived (`SnowflakeService.decode(id).timestamp`). Synchronous: the in-process
 * `SnowflakeService.getSync()` path, never a wait or a network call. `generate` is a bound
 * function, for nestjs-cls's `idGenerator`; `forFastify()` gives it to Fastify's `genReqId`:
 *
 * ```ts
 * const requestIds = new LeafRequestIdGenerator({ onUnavailable: () => `u-${randomUUID()}` });
 * const app = await NestFactory.create(AppModule, new FastifyAdapter({ genReqId: requestIds.forFastify() }));
 * requestIds.attach(app.get(SnowflakeService));
 * ```
 */
export class LeafRequestIdGenerator {
  constructor(
    private readonly options: LeafRequestIdOptions,
    private source?: SyncSnowflakeSource,
  ) {}

  /** Sets the `SnowflakeService` IDs come from (the adapter is built before the app). */
  attach(source: SyncSnowflakeSource): this {
    this.source = source;
    return this;
  }

  /**
   * `generate`, for Fastify's `genReqId`, which must never throw (Fastify leaves a request
   * whose `genReqId` threw unanswered).
   * @throws {LeafConfigurationError} when `onUnavailable` is `'throw'`.
   */
  forFastify(): () => string {
    if (this.options.onUnavailable === 'throw') {
      throw new LeafConfigurationError([
        "LeafRequestIdGenerator.forFastify() needs onUnavailable as a function: Fastify leaves a request unanswered when genReqId throws, so 'throw' cannot be honoured there",
      ]);
    }
    return this.generate;
  }

  /**
   * The next request ID: a snowflake ID as a decimal string.
   * @throws {LeafError} when snowflake cannot issue one now and `onUnavailable` is `'throw'`.
   */
  readonly generate = (): string => {
    try {
      if (!this.source) throw new SnowflakeNotReadyError();
      return this.source.getSync(this.options.key).toString();
    } catch (error) {
      const handler = this.options.onUnavailable;
      if (handler === 'throw' || !(error instanceof LeafError)) throw error;
      return handler(error);
    }
  };
}
