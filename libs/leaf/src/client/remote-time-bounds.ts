import { isUuidV7 } from '../core/formats/snowflake-uuid-v7';
import type { SnowflakeTimeBounds } from '../core/snowflake/snowflake-time-bounds';
import { decimal, noServerError, type RemoteRequest } from './remote-caller';

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
