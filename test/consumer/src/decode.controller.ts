import { Controller, Get, Param, UseInterceptors } from '@nestjs/common';
import { LeafIdJsonInterceptor, SnowflakeService } from 'nestjs-leaf';

/**
 * Decodes a snowflake ID (in-process Leaf only: it needs the local SnowflakeService); the
 * bigint `id` goes out as a decimal string through the library's interceptor.
 */
@Controller()
@UseInterceptors(LeafIdJsonInterceptor)
export class DecodeController {
  constructor(private readonly snowflake: SnowflakeService) {}

  @Get('decode/:id')
  decode(@Param('id') id: string) {
    return this.snowflake.decode(id);
  }
}
