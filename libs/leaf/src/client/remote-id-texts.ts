import { assertValidCount, assertValidKey, assertValidText } from '../core/arguments';
import {
  ENCODE_FORMATS,
  MAX_ENCODE_IDS,
  assertDecodeMode,
  assertEncodable,
  type IdDecodeOptions,
} from '../core/formats/id-codec';
import {
  ID_FORMATS,
  fieldsOf,
  parseIdFormat,
  type DecodedId,
  type DecodedIdFields,
  type IdFormat,
  type IdFormatEntry,
} from '../core/formats/id-format';
import type { LeafMode } from '../core/id.service';
import { InvalidArgumentError } from '../core/errors/invalid-argument.error';
import type { NumberMode } from '../core/numbers/number-format';
import { isUuidV7 } from '../core/formats/snowflake-uuid-v7';
import { timeInterval, type SnowflakeTimeBounds } from '../core/snowflake/snowflake-time-bounds';
import { answerList, decimal, isText, type RemoteCaller } from './remote-caller';

/**
 * The route (with its query) and the answer's field of a format the servers make: a keyed
 * format's is the ID route with `?format=` (only the servers hold the keys); UUIDv7 and TypeID,
 * made from snowflake IDs (only the servers know their layout), have routes of their own.
 */
function serverRoute({ name, keyed }: IdFormatEntry, mode: LeafMode, key: string, prefix: string) {
  const tag = encodeURIComponent(key);
  if (keyed) return { path: `/api/${mode}/ids/${tag}?format=${name}&`, field: 'ids' };
  if (name === 'uuid') return { path: `/api/snowflake/uuids/${tag}?`, field: 'uuids' };
  if (name === 'typeid')
    return {
      path: `/api/snowflake/typeids${prefix === '' ? '' : `/${prefix}`}?`,
      field: 'typeIds',
    };
  throw new Error(`no server route makes ${name}`);
}

/**
 * The remote client's texts the servers make (docs/formats.md): UUIDv7 and TypeIDs from their
 * snowflake IDs, so they are unique across servers; business numbers from the format's
 * counter; the IDs of a time interval from their layout. Each call is one request, its arguments checked before it is sent, its answer
 * checked before it is returned (a server whose answer does not check out is failed over, as
 * for IDs).
 */
export class RemoteIdTexts {
  constructor(
    private readonly caller: RemoteCaller,
    private readonly maxBatchSize: number,
  ) {}

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
    assertValidCount(count, this.maxBatchSize);
    const route = serverRoute(format, mode, key, prefix);
    const valid = (text: unknown): boolean => {
      if (format.keyed) return typeof text === 'string' && format.looksLike(text);
      try {
        const decoded = format.decode(text as string, {});
        return decoded.prefix === null || decoded.prefix === prefix;
      } catch {
        return false;
      }
    };
    return this.caller.send({
      path: `${route.path}count=${count}`,
      context: { mode, key },
      decode: (body) =>
        answerList(body, route.field, count, valid, `the answer is not ${count} ${route.field}`),
    });
  }

  /**
   * `LeafClient.snowflakeBounds`: the ends checked here, then
   * `GET /api/snowflake/bounds?from=<ms>&to=<ms>` (docs/snowflake.md, "IDs for a time"),
   * answered `{"from","to","min","max","uuidMin","uuidMax"}` with the IDs as decimal strings. An
   * answer for another interval, IDs out of order or a text that is not a UUIDv7 is a protocol
   * error (the server is failed over); no server answering is `SnowflakeNotReadyError`. The
   * server's layout decides: the client has none.
   */
  async snowflakeBounds(from: number | Date, to: number | Date): Promise<SnowflakeTimeBounds> {
    const [start, end] = timeInterval(from, to);
    return this.caller.send({
      path: `/api/snowflake/bounds?from=${start}&to=${end}`,
      context: { mode: 'snowflake', key: '' },
      decode: (body) => {
        const answer = JSON.parse(body) as Record<string, unknown>;
        const { from, to, min, max, uuidMin, uuidMax } = answer;
        const bounds = { from, to, min: decimal(min), max: decimal(max), uuidMin, uuidMax };
        if (
          bounds.from !== start ||
          bounds.to !== end ||
          bounds.min > bounds.max ||
          !isUuidV7(bounds.uuidMin) ||
          !isUuidV7(bounds.uuidMax)
        ) {
          throw new Error(`not the bounds of [${start}, ${end}]`);
        }
        return bounds as SnowflakeTimeBounds;
      },
    });
  }

  /**
   * `GET /api/encode/{format}?ids=…` (`LeafClient.encode`): the arguments checked here first,
   * the answer's count and shape checked before it is returned.
   */
  async encode(ids: readonly bigint[], format: IdFormat): Promise<string[]> {
    const entry = parseIdFormat(format, ENCODE_FORMATS);
    assertEncodable(ids);
    assertValidCount(ids.length, Math.min(this.maxBatchSize, MAX_ENCODE_IDS));
    return this.caller.send({
      path: `/api/encode/${entry}?ids=${ids.join(',')}`,
      context: { mode: 'segment', key: '' },
      decode: (body) => answerList(body, 'texts', ids.length, isText, 'not the texts asked for'),
    });
  }

  /** `GET /api/decode/{text}[?format=&mode=]` (`LeafClient.decode`), its answer as a `DecodedId`. */
  async decode(text: string, options: IdDecodeOptions = {}): Promise<DecodedId> {
    assertValidText(text, 'text', 256);
    if (text.length === 0) throw new InvalidArgumentError('text must not be empty', 'text');
    const query = new URLSearchParams();
    if (options.format !== undefined)
      query.set('format', parseIdFormat(options.format, ID_FORMATS));
    assertDecodeMode(options.mode);
    if (options.mode !== undefined) query.set('mode', options.mode);
    return this.caller.send({
      path: `/api/decode/${encodeURIComponent(text)}${query.size > 0 ? `?${query}` : ''}`,
      context: { mode: options.mode ?? 'segment', key: '' },
      decode: (body) => decodedIdFromJson(JSON.parse(body) as Record<string, unknown>),
    });
  }

  /**
   * `LeafClient.businessNumbers`: `GET /api/{mode}/numbers/{tag}?count=N` (docs/formats.md,
   * "Business numbers"), answered `{"key","numbers":[..]}`; every number a non-empty string. No
   * server answering is `SegmentNotReadyError` (segment) or `SequenceNoIssuerError` (sequence),
   * as for the modes' IDs.
   */
  async businessNumbers(mode: NumberMode, tag: string, count: number): Promise<string[]> {
    assertValidKey(tag);
    assertValidCount(count, this.maxBatchSize);
    return this.caller.send({
      path: `/api/${mode}/numbers/${encodeURIComponent(tag)}?count=${count}`,
      context: { mode, key: tag },
      decode: (body) => answerList(body, 'numbers', count, isText, 'not the numbers asked for'),
    });
  }
}

/** A decode route's answer read back; throws (the server is failed over) when it is not one. */
function decodedIdFromJson(answer: Record<string, unknown>): DecodedId {
  const { format, id, uuid, prefix, fields } = answer;
  const nullableText = (value: unknown) => value === null || typeof value === 'string';
  if (!ID_FORMATS.includes(format as IdFormat) || !nullableText(uuid) || !nullableText(prefix)) {
    throw new Error('not a decode answer');
  }
  const f = fields as Omit<DecodedIdFields, 'date'> | null;
  const numbers = f && [f.timestamp, f.dataCenterId, f.workerId, f.sequence];
  if (numbers && !numbers.every((n) => Number.isSafeInteger(n))) throw new Error('not fields');
  return {
    format: format as IdFormat,
    id: id === null ? null : decimal(id),
    uuid: uuid as string | null,
    prefix: prefix as string | null,
    fields: f && fieldsOf({ ...f, date: new Date(f.timestamp) }),
  };
}
