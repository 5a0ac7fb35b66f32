import { Controller, Get, Header, Param, Query } from '@nestjs/common';
import {
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiProduces,
  ApiQuery,
  ApiTags,
} from '@nestjs/swagger';
import { SnowflakeService } from 'nestjs-leaf';
import { idFormatWriter, snowflakeTimeBounds, type IdFormat } from 'nestjs-leaf/formats';
import { ClientRoute } from '../clients/client-route.decorator';
import { ApiCountQuery, ApiKeyParam, ApiLeafErrors, ApiListOk, ID_SCHEMA } from '../openapi';
import { parseCount } from './count';
import { IdRoutes } from './id-routes';
import { parseInstant } from './instant';

const UUID_SCHEMA = {
  type: 'string',
  format: 'uuid',
  pattern: '^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$',
  description: 'A UUIDv7 (RFC 9562) made from a snowflake ID',
} as const;
const TYPE_ID_SCHEMA = {
  type: 'string',
  pattern: '^([a-z]([a-z_]{0,61}[a-z])?_)?[0-7][0-9a-hjkmnp-tv-z]{25}$',
  description: 'A TypeID (spec v0.3.0) of such a UUIDv7',
} as const;
const INSTANT_SCHEMA = {
  type: 'string',
  description: 'ms since the Unix epoch, or ISO 8601 (a date, or a date-time with Z or an offset)',
  example: '2026-03-01T00:00:00Z',
} as const;

/** What `GET /api/snowflake/bounds` answers: the interval in ms, IDs as decimal strings. */
export interface SnowflakeBoundsAnswer {
  from: number;
  to: number;
  min: string;
  max: string;
  uuidMin: string;
  uuidMax: string;
}

const PREFIX_PARAM = {
  name: 'prefix',
  required: false,
  description: 'TypeID prefix: up to 63 of a-z and "_", starting and ending with a letter',
  schema: { type: 'string', pattern: '^([a-z]([a-z_]{0,61}[a-z])?)?$' },
} as const;

/**
 * Snowflake mode over HTTP. The key is validated like a segment key and otherwise
 * ignored by the generator, as in Leaf: one number space per worker. UUIDv7 and TypeIDs are
 * made from the same IDs (docs/formats.md), so they are unique across workers and increase
 * as the IDs do.
 */
@ApiTags('snowflake')
@Controller('api/snowflake')
export class SnowflakeController extends IdRoutes('snowflake', SnowflakeService, {
  get: ['Next snowflake ID'],
  ids: 'count snowflake IDs',
  keyed: ['uuid', 'uuids'],
}) {
  /** One UUIDv7, `text/plain`, no newline. */
  @Get('uuid/:key')
  @ClientRoute({ mode: 'snowflake', tagParam: 'key', cost: 'one' })
  @Header('content-type', 'text/plain; charset=utf-8')
  @ApiOperation({ summary: 'A UUIDv7 made from the next snowflake ID' })
  @ApiKeyParam()
  @ApiProduces('text/plain')
  @ApiOkResponse({ content: { 'text/plain': { schema: UUID_SCHEMA } } })
  @ApiLeafErrors(400, 404, 503)
  async uuid(@Param('key') key: string): Promise<string> {
    const [uuid] = await this.texts('uuid', key, '1');
    return uuid!;
  }

  /** `count` UUIDv7, increasing. */
  @Get('uuids/:key')
  @ClientRoute({ mode: 'snowflake', tagParam: 'key', cost: 'count' })
  @ApiOperation({ summary: 'count UUIDv7 made from snowflake IDs, increasing' })
  @ApiKeyParam()
  @ApiCountQuery()
  @ApiListOk('key', 'uuids', UUID_SCHEMA)
  @ApiLeafErrors(400, 404, 503)
  async uuids(
    @Param('key') key: string,
    @Query('count') count: unknown,
  ): Promise<{ key: string; uuids: string[] }> {
    return { key, uuids: await this.texts('uuid', key, count) };
  }

  /** One TypeID, `text/plain`; without a prefix (`/typeid`), the 26 characters alone. */
  @Get(['typeid', 'typeid/:prefix'])
  @ClientRoute({ mode: 'snowflake', tagParam: null, cost: 'one' })
  @Header('content-type', 'text/plain; charset=utf-8')
  @ApiOperation({ summary: 'A TypeID made from the next snowflake ID' })
  @ApiParam(PREFIX_PARAM)
  @ApiProduces('text/plain')
  @ApiOkResponse({ content: { 'text/plain': { schema: TYPE_ID_SCHEMA } } })
  @ApiLeafErrors(400, 404, 503)
  async typeId(@Param('prefix') prefix?: string): Promise<string> {
    const [typeId] = await this.texts('typeid', undefined, '1', prefix);
    return typeId!;
  }

  /** `count` TypeIDs of one prefix, increasing. */
  @Get(['typeids', 'typeids/:prefix'])
  @ClientRoute({ mode: 'snowflake', tagParam: null, cost: 'count' })
  @ApiOperation({ summary: 'count TypeIDs made from snowflake IDs, increasing' })
  @ApiParam(PREFIX_PARAM)
  @ApiCountQuery()
  @ApiListOk('prefix', 'typeIds', TYPE_ID_SCHEMA)
  @ApiLeafErrors(400, 404, 503)
  async typeIds(
    @Param('prefix') prefix: string | undefined,
    @Query('count') count: unknown,
  ): Promise<{ prefix: string; typeIds: string[] }> {
    const typeIds = await this.texts('typeid', undefined, count, prefix);
    return { prefix: prefix ?? '', typeIds };
  }

  /**
   * `GET /api/snowflake/bounds?from=&to=`: the smallest and largest snowflake ID and UUIDv7 of
   * `[from, to]` (both inclusive; `to` defaults to `from`) with this instance's layout
   * (docs/snowflake.md, "IDs for a time"). Both ends are parsed before the mode is asked.
   * @throws {InvalidArgumentError} for an end that does not parse, or `from` after `to` (400).
   * @throws {TimeBeforeEpochError} / {@link TimeBeyondLayoutError} for an end the layout cannot encode (400).
   * @throws {ModeDisabledError} with snowflake mode off (404).
   */
  @Get('bounds')
  @ClientRoute({ mode: 'snowflake', tagParam: null, cost: 'none' })
  @ApiOperation({ summary: 'The smallest and largest snowflake ID and UUIDv7 of a time interval' })
  @ApiQuery({ name: 'from', required: true, schema: INSTANT_SCHEMA })
  @ApiQuery({ name: 'to', required: false, schema: INSTANT_SCHEMA, description: 'default: from' })
  @ApiOkResponse({
    schema: {
      type: 'object',
      required: ['from', 'to', 'min', 'max', 'uuidMin', 'uuidMax'],
      properties: {
        from: { type: 'integer', description: 'ms since the Unix epoch' },
        to: { type: 'integer', description: 'ms since the Unix epoch, inclusive' },
        min: ID_SCHEMA,
        max: ID_SCHEMA,
        uuidMin: UUID_SCHEMA,
        uuidMax: UUID_SCHEMA,
      },
    },
  })
  @ApiLeafErrors(400, 404)
  bounds(@Query('from') rawFrom: unknown, @Query('to') rawTo: unknown): SnowflakeBoundsAnswer {
    const from = parseInstant(rawFrom, 'from');
    const to = rawTo === undefined ? from : parseInstant(rawTo, 'to');
    const b = snowflakeTimeBounds(this.service.layout, from, to);
    return { ...b, min: b.min.toString(), max: b.max.toString() };
  }

  /**
   * `count` IDs (the query parameter) written in `format` (UUIDv7 or TypeID, `ID_FORMAT_TABLE`)
   * with this worker's layout. The mode, the count, then the format's context (the prefix) are
   * checked before an ID is taken.
   */
  private async texts(
    format: IdFormat,
    key: string | undefined,
    count: unknown,
    prefix?: string,
  ): Promise<string[]> {
    const service = this.service;
    const n = parseCount(count);
    const write = idFormatWriter(format, {
      mode: 'snowflake',
      key: key ?? '',
      layout: service.layout,
      prefix,
    });
    return write(await service.getIds(key, n));
  }
}
