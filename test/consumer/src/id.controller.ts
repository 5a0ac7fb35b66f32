import { Controller, Get, Param, Query } from '@nestjs/common';
import { IdService, InvalidArgumentError, type LeafMode } from 'nestjs-leaf/client/nest';

/**
 * A user's controller on IdService: the same class whether LeafModule (in-process) or
 * LeafClientModule (remote) provides it. IDs go out as decimal strings.
 */
@Controller()
export class IdController {
  constructor(private readonly ids: IdService) {}

  @Get('id/:mode/:key')
  async one(@Param('mode') mode: string, @Param('key') key: string) {
    return { id: (await this.ids.get(this.mode(mode), key)).toString() };
  }

  @Get('ids/:mode/:key')
  async many(
    @Param('mode') mode: string,
    @Param('key') key: string,
    @Query('count') count: string,
  ) {
    const n = /^\d+$/.test(count ?? '') ? Number.parseInt(count, 10) : Number.NaN;
    const ids = await this.ids.getIds(this.mode(mode), key, n);
    return { ids: ids.map((id) => id.toString()) };
  }

  private mode(mode: string): LeafMode {
    if (mode !== 'segment' && mode !== 'snowflake') {
      throw new InvalidArgumentError('mode must be segment or snowflake', 'mode');
    }
    return mode;
  }
}
