import { Controller, Get, Header, Param, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiQuery, ApiTags } from '@nestjs/swagger';
import {
  ApiCountQuery,
  ApiEmptyKey,
  ApiIdList,
  ApiIdText,
  ApiKeyParam,
  ApiLeafErrors,
  ID_SCHEMA,
} from '../openapi';
import { IdService, InvalidArgumentError, SegmentService } from 'nestjs-leaf';
import { idList, parseAfter, parseCount } from './count';

/** Segment mode over HTTP: Leaf's route in Leaf's plain-text format, plus JSON batch routes. */
@ApiTags('segment')
@Controller('api/segment')
export class SegmentController {
  constructor(
    private readonly idService: IdService,
    private readonly segments: SegmentService,
  ) {}

  /** A route called with an empty key (`/api/segment/get/`) is a client error, not an unknown route. */
  @Get(['get', 'ids', 'range'])
  @ApiEmptyKey()
  emptyKey(): never {
    throw new InvalidArgumentError('key must not be empty', 'key');
  }

  /** Leaf-compatible: the ID in decimal, `text/plain`, no newline. */
  @Get('get/:key')
  @Header('content-type', 'text/plain; charset=utf-8')
  @ApiIdText('Next segment ID of a tag')
  async get(@Param('key') key: string): Promise<string> {
    return (await this.idService.get('segment', key)).toString();
  }

  /** `count` IDs as decimal strings. */
  @Get('ids/:key')
  @ApiIdList('count segment IDs of a tag')
  async ids(
    @Param('key') key: string,
    @Query('count') count: unknown,
  ): Promise<{ key: string; ids: string[] }> {
    return idList(this.idService, 'segment', key, count);
  }

  /**
   * A contiguous half-open range `[start, end)` of `count` IDs (1..`LEAF_MAX_RANGE`) now owned
   * by the caller, above everything this instance handed out for the key before; with
   * `after`, starting at `after` or above (the remote client passes the end of its last range).
   */
  @Get('range/:key')
  @ApiOperation({ summary: 'A contiguous range [start, end) of count IDs, owned by the caller' })
  @ApiKeyParam()
  @ApiCountQuery('How many IDs, 1..LEAF_MAX_RANGE')
  @ApiQuery({
    name: 'after',
    required: false,
    description: 'The range starts at this ID or above (decimal)',
    schema: ID_SCHEMA,
  })
  @ApiOkResponse({
    schema: {
      type: 'object',
      required: ['key', 'start', 'end', 'count'],
      properties: {
        key: { type: 'string' },
        start: ID_SCHEMA,
        end: ID_SCHEMA,
        count: { type: 'integer' },
      },
    },
  })
  @ApiLeafErrors(400, 404, 503)
  async range(
    @Param('key') key: string,
    @Query('count') count: unknown,
    @Query('after') after: unknown,
  ): Promise<{ key: string; start: string; end: string; count: number }> {
    const n = parseCount(count);
    const range = await this.segments.getRange(key, n, parseAfter(after));
    return { key, start: range.start.toString(), end: range.end.toString(), count: n };
  }
}
