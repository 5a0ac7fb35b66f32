import { Controller, Get, Param, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiQuery, ApiTags } from '@nestjs/swagger';
import { ApiCountQuery, ApiKeyParam, ApiLeafErrors, ID_SCHEMA } from '../openapi';
import { SegmentService } from 'nestjs-leaf';
import { ClientRoute } from '../clients/client-route.decorator';
import { parseAfter, parseCount } from './count';
import { IdRoutes } from './id-routes';

/** Segment mode over HTTP: Leaf's route in Leaf's plain-text format, plus JSON batch routes. */
@ApiTags('segment')
@Controller('api/segment')
export class SegmentController extends IdRoutes('segment', SegmentService, {
  get: ['Next segment ID of a tag'],
  ids: 'count segment IDs of a tag',
  keyed: ['range'],
}) {
  /**
   * A contiguous half-open range `[start, end)` of `count` IDs (1..`LEAF_MAX_RANGE`) now owned
   * by the caller, above everything this instance handed out for the key before; with
   * `after`, starting at `after` or above (the remote client passes the end of its last range).
   */
  @Get('range/:key')
  @ClientRoute({ mode: 'segment', tagParam: 'key', cost: 'count' })
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
  @ApiLeafErrors(400, 404, 409, 503)
  async range(
    @Param('key') key: string,
    @Query('count') count: unknown,
    @Query('after') after: unknown,
  ): Promise<{ key: string; start: string; end: string; count: number }> {
    const n = parseCount(count);
    const from = parseAfter(after);
    const service = this.service;
    const reserved = this.assertIdTag(key);
    if (reserved) await reserved;
    const range = await service.getRange(key, n, from);
    return { key, start: range.start.toString(), end: range.end.toString(), count: n };
  }
}
