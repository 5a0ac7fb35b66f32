import { Controller, Get, Header, Param, Query, applyDecorators } from '@nestjs/common';
import {
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiProduces,
  ApiQuery,
  ApiTags,
} from '@nestjs/swagger';
import { BusinessNumberService, type NumberMode } from 'nestjs-leaf/numbers';
import { InvalidArgumentError } from 'nestjs-leaf/errors';
import { assertValidText } from 'nestjs-leaf/server';
import { ClientRoute } from '../clients/client-route.decorator';
import { ApiCountQuery, ApiLeafErrors, ApiListOk } from '../openapi';
import { parseCount } from './count';
import { ModeRoutes } from './id-routes';

/** What `GET /api/number/decode/{tag}` answers: the counter as a decimal string. */
export interface DecodedNumberJson {
  tag: string;
  mode: NumberMode;
  /** The date part (`20261204`), `null` without one. */
  period: string | null;
  /** The `leaf_alloc` row the counter came from. */
  counterTag: string;
  counter: string;
}

/** What `GET /api/{mode}/numbers/{tag}` answers. */
type NumberBatch = { key: string; numbers: string[] };

const TAG_PARAM = ApiParam({
  name: 'tag',
  description: 'A tag with a business-number format (`/admin/formats`)',
  schema: { type: 'string', pattern: '^[A-Za-z0-9_.:-]{1,128}$' },
});
const NUMBER_TEXT = ApiOkResponse({
  description: 'The number, e.g. `ORD-20261204-000123`, no newline',
  content: { 'text/plain': { schema: { type: 'string' } } },
});

/** `GET {mode}/number/:tag`: the next business number of a tag, as plain text. */
function NumberText(mode: NumberMode, summary: string): MethodDecorator {
  return applyDecorators(
    Get(`${mode}/number/:tag`),
    ClientRoute({ mode, tagParam: 'tag', cost: 'one' }),
    Header('content-type', 'text/plain; charset=utf-8'),
    ApiOperation({ summary }),
    TAG_PARAM,
    ApiProduces('text/plain'),
    NUMBER_TEXT,
    ApiLeafErrors(400, 404, 409, 503),
  );
}

/** `GET {mode}/numbers/:tag?count=N`: `count` business numbers of a tag, as JSON. */
function NumberList(mode: NumberMode, summary: string): MethodDecorator {
  return applyDecorators(
    Get(`${mode}/numbers/:tag`),
    ClientRoute({ mode, tagParam: 'tag', cost: 'count' }),
    ApiOperation({ summary }),
    TAG_PARAM,
    ApiCountQuery('How many numbers, 1..LEAF_MAX_BATCH'),
    ApiListOk('key', 'numbers', { type: 'string' }, 'Numbers of one period, increasing'),
    ApiLeafErrors(400, 404, 409, 503),
  );
}

/**
 * Business numbers over HTTP (docs/formats.md, "Business numbers"), in the style of the ID
 * routes: `GET /api/{mode}/number/{tag}` (plain text) and `GET /api/{mode}/numbers/{tag}?count=N`
 * (JSON), from the mode the tag's format names; and their decoding. Provided with segment or
 * sequence mode.
 */
@ApiTags('business numbers')
@Controller('api')
export class BusinessNumberController extends ModeRoutes('segment', BusinessNumberService) {
  @NumberText('segment', 'Next business number of a tag served by segment mode')
  segmentNumber(@Param('tag') tag: string): Promise<string> {
    return this.service.nextOf('segment', tag);
  }

  @NumberList('segment', 'count business numbers of a segment tag')
  segmentNumbers(@Param('tag') tag: string, @Query('count') count: unknown): Promise<NumberBatch> {
    return this.batch('segment', tag, count);
  }

  @NumberText(
    'sequence',
    'Next business number of a sequence tag: above every one returned before the call',
  )
  sequenceNumber(@Param('tag') tag: string): Promise<string> {
    return this.service.nextOf('sequence', tag);
  }

  @NumberList('sequence', 'count business numbers of a sequence tag, increasing')
  sequenceNumbers(@Param('tag') tag: string, @Query('count') count: unknown): Promise<NumberBatch> {
    return this.batch('sequence', tag, count);
  }

  /** What a business number says under its tag's format. */
  @Get('number/decode/:tag')
  @ClientRoute({ mode: null, tagParam: 'tag', cost: 'none' })
  @ApiOperation({ summary: 'Decode a business number: period, counter, counter row, mode' })
  @TAG_PARAM
  @ApiQuery({ name: 'number', required: true, schema: { type: 'string' } })
  @ApiOkResponse({
    schema: {
      type: 'object',
      properties: {
        tag: { type: 'string' },
        mode: { type: 'string', enum: ['segment', 'sequence'] },
        period: { type: 'string', nullable: true },
        counterTag: { type: 'string' },
        counter: { type: 'string', pattern: '^[0-9]+$' },
      },
    },
  })
  @ApiLeafErrors(400, 404)
  async decode(
    @Param('tag') tag: string,
    @Query('number') number: unknown,
  ): Promise<DecodedNumberJson> {
    if (typeof number !== 'string' || number.length === 0) {
      throw new InvalidArgumentError('number is required (at most 256 characters)', 'number');
    }
    assertValidText(number, 'number', 256);
    const decoded = await this.service.decode(tag, number);
    return { ...decoded, counter: decoded.counter.toString() };
  }

  private async batch(mode: NumberMode, tag: string, count: unknown): Promise<NumberBatch> {
    return { key: tag, numbers: await this.service.nextBatchOf(mode, tag, parseCount(count)) };
  }
}
