import { Controller, Get, Header, Param, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiProduces, ApiTags } from '@nestjs/swagger';
import { ApiCountQuery, ApiKeyParam, ApiLeafErrors, ID_SCHEMA } from '../openapi';
import { IdService, InvalidArgumentError } from 'nestjs-leaf';
import { parseCount } from './count';

/**
 * Snowflake mode over HTTP. The key is validated like a segment key and otherwise
 * ignored by the generator, as in Leaf: one number space per worker.
 */
@ApiTags('snowflake')
@Controller('api/snowflake')
export class SnowflakeController {
  constructor(private readonly idService: IdService) {}

  /** A route called with an empty key is a client error, not an unknown route. */
  @Get(['get', 'ids'])
  @ApiOperation({ summary: 'Empty key: always 400' })
  @ApiLeafErrors(400)
  emptyKey(): never {
    throw new InvalidArgumentError('key must not be empty', 'key');
  }

  /** Leaf-compatible: the ID in decimal, `text/plain`, no newline. */
  @Get('get/:key')
  @Header('content-type', 'text/plain; charset=utf-8')
  @ApiOperation({ summary: 'Next snowflake ID' })
  @ApiKeyParam()
  @ApiProduces('text/plain')
  @ApiOkResponse({
    description: "The ID in decimal, no newline (Leaf's wire format)",
    content: { 'text/plain': { schema: ID_SCHEMA } },
  })
  @ApiLeafErrors(400, 404, 503)
  async get(@Param('key') key: string): Promise<string> {
    return (await this.idService.get('snowflake', key)).toString();
  }

  /** `count` IDs as decimal strings, increasing. */
  @Get('ids/:key')
  @ApiOperation({ summary: 'count snowflake IDs' })
  @ApiKeyParam()
  @ApiCountQuery()
  @ApiOkResponse({
    description: 'IDs, increasing',
    schema: {
      type: 'object',
      required: ['key', 'ids'],
      properties: { key: { type: 'string' }, ids: { type: 'array', items: ID_SCHEMA } },
    },
  })
  @ApiLeafErrors(400, 404, 503)
  async ids(
    @Param('key') key: string,
    @Query('count') count: unknown,
  ): Promise<{ key: string; ids: string[] }> {
    const ids = await this.idService.getIds('snowflake', key, parseCount(count));
    return { key, ids: ids.map((id) => id.toString()) };
  }
}
