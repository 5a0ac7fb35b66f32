import { Controller, Get, Header, Param, Query } from '@nestjs/common';
import { IdService, InvalidArgumentError } from 'nestjs-leaf';
import { parseCount } from './count';

/** Segment mode over HTTP: Leaf's route in Leaf's plain-text format, plus JSON batch routes. */
@Controller('api/segment')
export class SegmentController {
  constructor(private readonly idService: IdService) {}

  /** A route called with an empty key (`/api/segment/get/`) is a client error, not an unknown route. */
  @Get(['get', 'ids', 'range'])
  emptyKey(): never {
    throw new InvalidArgumentError('key must not be empty', 'key');
  }

  /** Leaf-compatible: the ID in decimal, `text/plain`, no newline. */
  @Get('get/:key')
  @Header('content-type', 'text/plain; charset=utf-8')
  async get(@Param('key') key: string): Promise<string> {
    return (await this.idService.get('segment', key)).toString();
  }

  /** `count` IDs as decimal strings. */
  @Get('ids/:key')
  async ids(
    @Param('key') key: string,
    @Query('count') count: unknown,
  ): Promise<{ key: string; ids: string[] }> {
    const ids = await this.idService.getIds('segment', key, parseCount(count));
    return { key, ids: ids.map((id) => id.toString()) };
  }

  /** A contiguous half-open range `[start, end)` of `count` IDs now owned by the caller. */
  @Get('range/:key')
  async range(
    @Param('key') key: string,
    @Query('count') count: unknown,
  ): Promise<{ key: string; start: string; end: string; count: number }> {
    const n = parseCount(count);
    const range = await this.idService.segment.getRange(key, n);
    return { key, start: range.start.toString(), end: range.end.toString(), count: n };
  }
}
