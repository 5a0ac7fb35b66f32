import { assertValidCount, assertValidKey } from '../core/arguments';
import { SnowflakeNotReadyError } from '../core/errors/snowflake-not-ready.error';
import { isUuidV7 } from '../core/formats/snowflake-uuid-v7';
import { assertTypeIdPrefix, isTypeId } from '../core/formats/type-id';
import type { NumberMode } from '../core/numbers/number-format';
import { businessNumbersRequest } from './business-numbers.request';
import type { ResolvedLeafClientOptions } from './leaf-client.options';
import type { RemoteCaller } from './remote-caller';

/** What {@link RemoteIdTexts} needs from its client. */
export interface RemoteIdTextsHost {
  readonly caller: RemoteCaller;
  readonly options: Pick<ResolvedLeafClientOptions, 'maxBatchSize' | 'requestTimeoutMs'>;
  /** Resolves once a server is known. @throws {ShuttingDownError} once the client is closed. */
  ready(): Promise<void>;
}

/**
 * The remote client's UUIDv7, TypeID and business-number calls (docs/formats.md): the servers
 * make them (UUIDs and TypeIDs from their snowflake IDs, so they are unique across servers;
 * business numbers from the format's counter); each call is one request, its
 * arguments checked before it is sent, its answer checked before it is returned (a server
 * whose answer does not check out is failed over, as for IDs).
 */
export class RemoteIdTexts {
  private readonly inFlight = new Set<Promise<unknown>>();

  constructor(private readonly host: RemoteIdTextsHost) {}

  /** Resolves once every request in flight has settled (for the client's `close()`). Never rejects. */
  async settled(): Promise<void> {
    await Promise.all([...this.inFlight]);
  }

  /** `GET /api/snowflake/uuids/{key}?count=N`. */
  uuids(key: string, count: number): Promise<string[]> {
    try {
      assertValidKey(key);
      return this.request(
        key,
        `/api/snowflake/uuids/${encodeURIComponent(key)}`,
        count,
        'uuids',
        isUuidV7,
      );
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /** `GET /api/snowflake/typeids/{prefix}?count=N`. */
  typeIds(prefix: string, count: number): Promise<string[]> {
    try {
      assertTypeIdPrefix(prefix);
      const own = prefix === '' ? /^[^_]+$/ : new RegExp(`^${prefix}_[^_]+$`);
      const valid = (text: unknown) => isTypeId(text) && own.test(text as string);
      const path = `/api/snowflake/typeids${prefix === '' ? '' : `/${prefix}`}`;
      return this.request(prefix, path, count, 'typeIds', valid);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /** `GET /api/{mode}/numbers/{tag}?count=N`. */
  async businessNumbers(mode: NumberMode, tag: string, count: number): Promise<string[]> {
    assertValidKey(tag);
    assertValidCount(count, this.host.options.maxBatchSize);
    await this.host.ready();
    const timeoutMs = this.host.options.requestTimeoutMs;
    return this.track(
      this.host.caller.request(businessNumbersRequest(mode, tag, count, timeoutMs)),
    );
  }

  private request(
    name: string,
    path: string,
    count: number,
    field: 'uuids' | 'typeIds',
    valid: (text: unknown) => boolean,
  ): Promise<string[]> {
    const host = this.host;
    assertValidCount(count, host.options.maxBatchSize);
    const request = host.ready().then(() =>
      host.caller.request({
        path: `${path}?count=${count}`,
        context: { mode: 'snowflake', key: name },
        timeoutMs: host.options.requestTimeoutMs,
        decode: (body) => {
          const texts = (JSON.parse(body) as Record<string, unknown>)[field];
          if (!Array.isArray(texts) || texts.length !== count || !texts.every(valid)) {
            throw new Error(`the answer is not ${count} ${field}`);
          }
          return texts as string[];
        },
        unavailable: (cause) => new SnowflakeNotReadyError({ cause }),
      }),
    );
    return this.track(request);
  }

  /** `request`, counted in flight until it settles (see {@link settled}). */
  private track<T>(request: Promise<T>): Promise<T> {
    const settled = request.catch(() => undefined);
    this.inFlight.add(settled);
    void settled.finally(() => this.inFlight.delete(settled));
    return request;
  }
}
