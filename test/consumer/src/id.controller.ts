import { Controller, Get, Param, Query, UseInterceptors } from '@nestjs/common';
import {
  IdService,
  InvalidArgumentError,
  LeafIdJsonInterceptor,
  SnowflakeService,
  type LeafMode,
} from 'nestjs-leaf';

/** A user's controller on IdService: bigint IDs come out as decimal strings. */
@Controller()
@UseInterceptors(LeafIdJsonInterceptor)
export class IdController {
  constructor(
    private readonly ids: IdService,
    private readonly snowflake: SnowflakeService,
  ) {}

  @Get('id/:mode/:key')
  async one(@Param('mode') mode: string, @Param('key') key: string) {
    return { id: await this.ids.get(this.mode(mode), key) };
  }

  @Get('ids/:mode/:key')
  async many(
    @Param('mode') mode: string,
    @Param('key') key: string,
    @Query('count') count: string,
  ) {
    const n = /^\d+$/.test(count ?? '') ? Number.parseInt(count, 10) : Number.NaN;
    return { ids: await this.ids.getIds(this.mode(mode), key, n) };
  }

  @Get('decode/:id')
  decode(@Param('id') id: string) {
    return this.snowflake.decode(id);
  }

  private mode(mode: string): LeafMode {
    if (mode !== 'segment' && mode !== 'snowflake') {
      throw new InvalidArgumentError('mode must be segment or snowflake', 'mode');
    }
    return mode;
  }
}
