import { Controller } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { SnowflakeService } from 'nestjs-leaf';
import { IdRoutes } from './id-routes';

/**
 * Snowflake mode over HTTP. The key is validated like a segment key and otherwise
 * ignored by the generator, as in Leaf: one number space per worker.
 */
@ApiTags('snowflake')
@Controller('api/snowflake')
export class SnowflakeController extends IdRoutes('snowflake', SnowflakeService, {
  get: ['Next snowflake ID'],
  ids: 'count snowflake IDs',
}) {}
