import { Controller, Get, Header, Param, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { ApiEmptyKey, ApiIdList, ApiIdText } from '../openapi';
import { IdService, InvalidArgumentError } from 'nestjs-leaf';
import { idList } from './count';

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
  @ApiEmptyKey()
  emptyKey(): never {
    throw new InvalidArgumentError('key must not be empty', 'key');
  }

  /** Leaf-compatible: the ID in decimal, `text/plain`, no newline. */
  @Get('get/:key')
  @Header('content-type', 'text/plain; charset=utf-8')
  @ApiIdText('Next snowflake ID')
  async get(@Param('key') key: string): Promise<string> {
    return (await this.idService.get('snowflake', key)).toString();
  }

  /** `count` IDs as decimal strings, increasing. */
  @Get('ids/:key')
  @ApiIdList('count snowflake IDs')
  async ids(
    @Param('key') key: string,
    @Query('count') count: unknown,
  ): Promise<{ key: string; ids: string[] }> {
    return idList(this.idService, 'snowflake', key, count);
  }
}
