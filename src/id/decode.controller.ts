import { Controller, Get, Optional, Param, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiParam, ApiQuery, ApiTags } from '@nestjs/swagger';
import { ApiLeafErrors, ApiListOk, ID_SCHEMA } from '../openapi';
import { IdService, SnowflakeService, type LeafMode } from 'nestjs-leaf';
import { InvalidArgumentError } from 'nestjs-leaf/errors';
import {
  ENCODE_FORMATS,
  MAX_ENCODE_IDS,
  ID_FORMATS,
  parseIdFormat,
  type IdFormat,
} from 'nestjs-leaf/formats';
import { ClientRoute } from '../clients/client-route.decorator';
import { modeService } from './id-routes';
import { LEAF_MODES, parseIdList } from './count';

/** Leaf's decode answer (all strings), followed by our own fields. */
export interface DecodeAnswer {
  /** `"<ms>(<yyyy-MM-dd HH:mm:ss.SSS>)"`, the date in UTC. */
  timestamp: string;
  workerId: string;
  sequenceId: string;
  id: string;
  timestampMs: string;
  isoDate: string;
  /** The data-centre field ("0" in layouts without data-centre bits). */
  dataCenterId: string;
}

/** What `GET /api/decode/{text}` answers: the form, the number, and what else the text encodes. */
export interface DecodeTextAnswer {
  text: string;
  format: IdFormat;
  /** The number (decimal); for a UUIDv7 or TypeID the snowflake ID under it; `null` if none fits. */
  id: string | null;
  uuid: string | null;
  prefix: string | null;
  /** Time, data centre, worker, sequence: for a UUIDv7 or TypeID, or a number read with `mode=snowflake`. */
  fields: {
    timestamp: number;
    isoDate: string;
    dataCenterId: number;
    workerId: number;
    sequence: number;
  } | null;
}

function leafDate(date: Date): string {
  // Leaf formats with Java's yyyy-MM-dd HH:mm:ss.SSS; we print UTC so every instance agrees.
  return date.toISOString().replace('T', ' ').replace('Z', '');
}

/**
 * Leaf-server's operator endpoint, what a snowflake ID says about itself; and ours, what an ID
 * in any of its text forms encodes.
 */
@ApiTags('snowflake')
@Controller()
export class DecodeController {
  constructor(
    private readonly ids: IdService,
    @Optional() private readonly snowflake?: SnowflakeService,
  ) {}

  /**
   * `GET /decodeSnowflakeId?snowflakeId=N`.
   * @throws {InvalidArgumentError} for a missing, non-decimal or out-of-range ID (400).
   * @throws {ModeDisabledError} with snowflake mode off (404).
   */
  @Get('decodeSnowflakeId')
  @ClientRoute({ mode: 'snowflake', tagParam: null, cost: 'none' })
  @ApiOperation({ summary: 'Split a snowflake ID into timestamp, worker ID and sequence' })
  @ApiQuery({ name: 'snowflakeId', required: true, schema: ID_SCHEMA })
  @ApiOkResponse({
    schema: {
      type: 'object',
      properties: {
        timestamp: { type: 'string', example: '1796212352749(2026-12-02 11:52:32.749)' },
        workerId: { type: 'string', pattern: '^[0-9]+$' },
        sequenceId: { type: 'string', pattern: '^[0-9]+$' },
        dataCenterId: { type: 'string', pattern: '^[0-9]+$' },
        id: ID_SCHEMA,
        timestampMs: { type: 'string', pattern: '^[0-9]+$' },
        isoDate: { type: 'string', format: 'date-time' },
      },
    },
  })
  @ApiLeafErrors(400, 404)
  decode(@Query('snowflakeId') raw: unknown): DecodeAnswer {
    if (typeof raw !== 'string' || !/^\d{1,19}$/.test(raw)) {
      throw new InvalidArgumentError(
        'snowflakeId must be a decimal integer in 0..2^63-1',
        'snowflakeId',
      );
    }
    const decoded = modeService(this.snowflake, 'snowflake').decode(raw);
    return {
      timestamp: `${decoded.timestamp}(${leafDate(decoded.date)})`,
      workerId: String(decoded.workerId),
      sequenceId: String(decoded.sequence),
      id: raw.replace(/^0+(?=\d)/, ''),
      timestampMs: String(decoded.timestamp),
      isoDate: decoded.date.toISOString(),
      dataCenterId: String(decoded.dataCenterId),
    };
  }

  /**
   * `GET /api/encode/{format}?ids=1,2,…`: IDs issued earlier written in a format of the number
   * itself or keyed (decimal, base62/36/32, opaque; docs/public-ids.md), for a service that
   * holds no keys (`LeafClient.encode`).
   * @throws {InvalidArgumentError} for another format or a bad `ids` list (400).
   * @throws {OpaqueDisabledError} for `opaque` without a key ring (404).
   */
  @Get('api/encode/:format')
  @ClientRoute({ mode: null, tagParam: null, cost: 'none' })
  @ApiOperation({ summary: 'Write IDs issued earlier in a format (opaque: under the key ring)' })
  @ApiParam({ name: 'format', schema: { type: 'string', enum: [...ENCODE_FORMATS] } })
  @ApiQuery({
    name: 'ids',
    required: true,
    description: `1 to ${MAX_ENCODE_IDS} decimal IDs, comma-separated`,
    schema: { type: 'string', example: '2128094966440788019,2128094966440788020' },
  })
  @ApiListOk('format', 'texts', { type: 'string' })
  @ApiLeafErrors(400, 404)
  async encode(
    @Param('format') format: string,
    @Query('ids') rawIds: unknown,
  ): Promise<{ format: string; texts: string[] }> {
    const ids = parseIdList(rawIds);
    return { format, texts: await this.ids.encode(ids, format as IdFormat) };
  }

  /** A route called with an empty text (`/api/decode/`) is a client error, not an unknown route. */
  @Get('api/decode')
  @ClientRoute({ mode: null, tagParam: null, cost: 'none' })
  @ApiOperation({ summary: 'Empty text: always 400' })
  @ApiLeafErrors(400)
  emptyText(): never {
    throw new InvalidArgumentError('text must not be empty', 'text');
  }

  /**
   * `GET /api/decode/{text}?format=&mode=`: what an ID in any of its forms encodes
   * (docs/formats.md). Without `format` the form is told by the text's shape; `mode=snowflake`
   * reads a number as a snowflake ID. UUIDv7 and TypeID are read with this instance's snowflake
   * layout, opaque IDs with its key ring.
   * @throws {InvalidArgumentError} for an unknown format or mode, or a text not valid in its form (400).
   * @throws {ModeDisabledError} for a UUIDv7, a TypeID or `mode=snowflake` with snowflake mode off (404).
   * @throws {OpaqueDisabledError} for an opaque ID without a key ring (404).
   * @throws {OpaqueKeyRetiredError} for an opaque ID whose key version is not in the ring (410).
   */
  @Get('api/decode/:text')
  @ClientRoute({ mode: null, tagParam: null, cost: 'none' })
  @ApiOperation({ summary: 'What an ID in any form encodes: number, time, worker, sequence' })
  @ApiParam({
    name: 'text',
    description: 'An ID: decimal, base62/36/32, UUIDv7, TypeID, opaque or opaque UUID',
  })
  @ApiQuery({
    name: 'format',
    required: false,
    description: 'The form of the text (default: told by its shape)',
    schema: { type: 'string', enum: [...ID_FORMATS] },
  })
  @ApiQuery({
    name: 'mode',
    required: false,
    description: 'The mode that issued a numeric ID: with snowflake, its fields are decoded',
    schema: { type: 'string', enum: [...LEAF_MODES] },
  })
  @ApiOkResponse({
    schema: {
      type: 'object',
      required: ['text', 'format', 'id', 'uuid', 'prefix', 'fields'],
      properties: {
        text: { type: 'string' },
        format: { type: 'string', enum: [...ID_FORMATS] },
        id: { ...ID_SCHEMA, nullable: true },
        uuid: { type: 'string', nullable: true },
        prefix: { type: 'string', nullable: true },
        fields: {
          type: 'object',
          nullable: true,
          properties: {
            timestamp: { type: 'integer' },
            isoDate: { type: 'string', format: 'date-time' },
            dataCenterId: { type: 'integer' },
            workerId: { type: 'integer' },
            sequence: { type: 'integer' },
          },
        },
      },
    },
  })
  @ApiLeafErrors(400, 404, 410)
  async decodeText(
    @Param('text') text: string,
    @Query('format') rawFormat: unknown,
    @Query('mode') rawMode: unknown,
  ): Promise<DecodeTextAnswer> {
    const format = rawFormat === undefined ? undefined : parseIdFormat(rawFormat, ID_FORMATS);
    // The library's reading: the mode checked (400), this instance's snowflake layout (404 when
    // off) and key ring.
    const decoded = await this.ids.decode(text, { format, mode: rawMode as LeafMode | undefined });
    const fields = decoded.fields;
    return {
      text,
      format: decoded.format,
      id: decoded.id === null ? null : decoded.id.toString(),
      uuid: decoded.uuid,
      prefix: decoded.prefix,
      fields: fields && {
        timestamp: fields.timestamp,
        isoDate: fields.date.toISOString(),
        dataCenterId: fields.dataCenterId,
        workerId: fields.workerId,
        sequence: fields.sequence,
      },
    };
  }
}
