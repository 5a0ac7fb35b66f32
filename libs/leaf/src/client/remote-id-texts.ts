import { assertValidCount, assertValidKey } from '../core/arguments';
import type { IdFormat, IdFormatEntry } from '../core/formats/id-format';
import type { LeafMode } from '../core/id.service';
import type { NumberMode } from '../core/numbers/number-format';
import { isUuidV7 } from '../core/formats/snowflake-uuid-v7';
import { timeInterval, type SnowflakeTimeBounds } from '../core/snowflake/snowflake-time-bounds';
import type { ResolvedLeafClientOptions } from './leaf-client.options';
import { decimal, noServerError, type RemoteCaller } from './remote-caller';
import type { RemoteRequest } from './remote-caller';
import { InFlight } from './in-flight';

/**
 * The server route of each format the servers make (those made from snowflake IDs in
 * `ID_FORMAT_TABLE`: only they know their layout; keyed ones: only they hold the keys), with its
 * query, and the field of its answer.
 */
const SERVER_ROUTES: Partial<
  Record<IdFormat, { path(mode: LeafMode, key: string, prefix: string): string; field: string }>
> = {
  uuid: {
    path: (_mode, key) => `/api/snowflake/uuids/${encodeURIComponent(key)}?`,
    field: 'uuids',
  },
  typeid: {
    path: (_mode, _key, prefix) => `/api/snowflake/typeids${prefix === '' ? '' : `/${prefix}`}?`,
    field: 'typeIds',
  },
  opaque: keyedRoute('opaque'),
  'opaque-uuid': keyedRoute('opaque-uuid'),
};

/** The ID route with `?format=` of a keyed format. */
function keyedRoute(format: IdFormat) {
  return {
    path: (mode: LeafMode, key: string) =>
      `/api/${mode}/ids/${encodeURIComponent(key)}?format=${format}&`,
    field: 'ids',
  };
}

/** What {@link RemoteIdTexts} needs from its client. */
export interface RemoteIdTextsHost {
  readonly caller: RemoteCaller;
  readonly options: Pick<ResolvedLeafClientOptions, 'maxBatchSize' | 'requestTimeoutMs'>;
  /** Resolves once a server is known. @throws {ShuttingDownError} once the client is closed. */
  ready(): Promise<void>;
}

/**
 * The remote client's texts the servers make (docs/formats.md): UUIDv7 and TypeIDs from their
 * snowflake IDs, so they are unique across servers; business numbers from the format's
 * counter; the IDs of a time interval from their layout. Each call is one request, its arguments checked before it is sent, its answer
 * checked before it is returned (a server whose answer does not check out is failed over, as
 * for IDs).
 */
export class RemoteIdTexts {
  private readonly inFlight = new InFlight();

  constructor(private readonly host: RemoteIdTextsHost) {}

  /** Resolves once every request in flight has settled (for the client's `close()`). Never rejects. */
  settled(): Promise<void> {
    return this.inFlight.settled();
  }

  /**
   * `count` IDs of `mode` in `format` made by the servers (`GET /api/snowflake/uuids/{key}`,
   * `…/typeids/{prefix}`, `/api/{mode}/ids/{key}?format=opaque`, `count=N`): key, context and
   * count checked before the request, every text of the answer read back by the format (a
   * TypeID of another prefix is refused; an opaque ID, which needs the keys, by its shape).
   */
  async madeByServers(
    format: IdFormatEntry,
    mode: LeafMode,
    key: string,
    count: number,
    prefix: string,
  ): Promise<string[]> {
    assertValidKey(key);
    // The keys are the servers': they check a keyed format's context.
    if (!format.keyed) format.check({ mode, key, prefix });
    const host = this.host;
    assertValidCount(count, host.options.maxBatchSize);
    const route = SERVER_ROUTES[format.name];
    if (!route) throw new Error(`no server route makes ${format.name}`);
    const valid = (text: unknown): boolean => {
      if (format.keyed) return typeof text === 'string' && format.looksLike(text);
      try {
        const decoded = format.decode(text as string, {});
        return decoded.prefix === null || decoded.prefix === prefix;
      } catch {
        return false;
      }
    };
    await host.ready();
    return this.inFlight.track(
      host.caller.request({
        path: `${route.path(mode, key, prefix)}count=${count}`,
        context: { mode, key },
        timeoutMs: host.options.requestTimeoutMs,
        decode: (body) => {
          const texts = (JSON.parse(body) as Record<string, unknown>)[route.field];
          if (!Array.isArray(texts) || texts.length !== count || !texts.every(valid)) {
            throw new Error(`the answer is not ${count} ${route.field}`);
          }
          return texts as string[];
        },
        unavailable: (cause) => noServerError(mode, key, cause),
      }),
    );
  }

  /** `GET /api/snowflake/bounds?from=<ms>&to=<ms>`, the ends checked first ({@link timeBoundsRequest}). */
  async snowflakeBounds(from: number | Date, to: number | Date): Promise<SnowflakeTimeBounds> {
    const [start, end] = timeInterval(from, to);
    await this.host.ready();
    const timeoutMs = this.host.options.requestTimeoutMs;
    return this.inFlight.track(this.host.caller.request(timeBoundsRequest(start, end, timeoutMs)));
  }

  /** `GET /api/{mode}/numbers/{tag}?count=N`. */
  async businessNumbers(mode: NumberMode, tag: string, count: number): Promise<string[]> {
    assertValidKey(tag);
    assertValidCount(count, this.host.options.maxBatchSize);
    await this.host.ready();
    const timeoutMs = this.host.options.requestTimeoutMs;
    return this.inFlight.track(
      this.host.caller.request(businessNumbersRequest(mode, tag, count, timeoutMs)),
    );
  }
}

/**
 * The request of `LeafClient.businessNumbers`: `GET /api/{mode}/numbers/{tag}?count=N`
 * (docs/formats.md, "Business numbers"), answered `{"key","numbers":[..]}`; every number a
 * non-empty string. No server answering is `SegmentNotReadyError` (segment) or
 * `SequenceNoIssuerError` (sequence), as for the modes' IDs.
 */
export function businessNumbersRequest(
  mode: NumberMode,
  tag: string,
  count: number,
  timeoutMs: number,
): RemoteRequest<string[]> {
  return {
    path: `/api/${mode}/numbers/${encodeURIComponent(tag)}?count=${count}`,
    context: { mode, key: tag },
    timeoutMs,
    decode: (body) => {
      const { numbers } = JSON.parse(body) as { numbers?: unknown };
      if (
        !Array.isArray(numbers) ||
        numbers.length !== count ||
        numbers.some((n) => typeof n !== 'string' || n.length === 0)
      ) {
        throw new Error('not the numbers asked for');
      }
      return numbers as string[];
    },
    unavailable: (cause) => noServerError(mode, tag, cause),
  };
}

/**
 * The request of `LeafClient.snowflakeBounds`: `GET /api/snowflake/bounds?from=<ms>&to=<ms>`
 * (docs/snowflake.md, "IDs for a time"), answered `{"from","to","min","max","uuidMin","uuidMax"}`
 * with the IDs as decimal strings. An answer for another interval, IDs out of order or a text
 * that is not a UUIDv7 is a protocol error (the server is failed over); no server answering is
 * `SnowflakeNotReadyError`. The server's layout decides: the client has none.
 */
export function timeBoundsRequest(
  from: number,
  to: number,
  timeoutMs: number,
): RemoteRequest<SnowflakeTimeBounds> {
  return {
    path: `/api/snowflake/bounds?from=${from}&to=${to}`,
    context: { mode: 'snowflake', key: '' },
    timeoutMs,
    decode: (body) => {
      const answer = JSON.parse(body) as Record<string, unknown>;
      const bounds = {
        from: answer.from,
        to: answer.to,
        min: decimal(answer.min),
        max: decimal(answer.max),
        uuidMin: answer.uuidMin,
        uuidMax: answer.uuidMax,
      };
      if (
        bounds.from !== from ||
        bounds.to !== to ||
        bounds.min > bounds.max ||
        !isUuidV7(bounds.uuidMin) ||
        !isUuidV7(bounds.uuidMax)
      ) {
        throw new Error(`not the bounds of [${from}, ${to}]`);
      }
      return bounds as SnowflakeTimeBounds;
    },
    unavailable: (cause) => noServerError('snowflake', '', cause),
  };
}
