import { Body, Controller, HttpCode, Param, Post, applyDecorators } from '@nestjs/common';
import { ApiBody, ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import { InvalidArgumentError } from 'nestjs-leaf/errors';
import {
  GAPLESS_STATES,
  GaplessNumberService,
  gaplessNumberJson,
  type GaplessNumberJson,
} from 'nestjs-leaf/gapless';
import { objectBody } from '../admin/json-body';
import { ClientRoute } from '../clients/client-route.decorator';
import { ModeRoutes } from '../id/id-routes';
import { ApiLeafErrors } from '../openapi';

/** The `{series}` path parameter. */
export const SERIES_PARAM = ApiParam({
  name: 'series',
  description: 'A gapless series (`/admin/gapless`)',
  schema: { type: 'string', pattern: '^[A-Za-z0-9_.:-]{1,128}$' },
});

const NUMBER_ANSWER = ApiOkResponse({
  description: 'The number the key holds, the number as a decimal string',
  schema: {
    type: 'object',
    properties: {
      series: { type: 'string' },
      periodKey: { type: 'string', description: '`` without a period, `2026`, `202612`' },
      number: { type: 'string', pattern: '^[1-9][0-9]*$' },
      text: { type: 'string', example: 'INV-2026-000123' },
      state: { type: 'string', enum: [...GAPLESS_STATES] },
      key: { type: 'string' },
      reason: { type: 'string', nullable: true },
      expiresAt: { type: 'integer', nullable: true, description: 'epoch ms, database clock' },
    },
  },
});

const KEY = { type: 'string', pattern: '^[A-Za-z0-9_.:-]{1,128}$', description: 'idempotency key' };
const NUMBER = { type: 'string', pattern: '^[1-9][0-9]{0,18}$' };

/** The `number` of a body: a decimal string; a JSON number could have lost digits already. */
function numberField(body: Record<string, unknown>): string {
  if (typeof body.number === 'string') return body.number;
  throw new InvalidArgumentError(
    'number must be a decimal string ("17"), not a JSON number',
    'number',
  );
}

/**
 * A `POST {series}/{action}` client route: its JSON body (`required` and `properties`), costing
 * `cost`, answering the number the key holds, or the errors `statuses`.
 */
function NumberRoute(
  action: string,
  cost: 'one' | 'none',
  summary: string,
  body: { required: string[]; properties: Record<string, object> },
  statuses: number[],
): MethodDecorator {
  return applyDecorators(
    Post(`:series/${action}`),
    HttpCode(200),
    ClientRoute({ mode: 'gapless', tagParam: 'series', cost }),
    ApiOperation({ summary }),
    SERIES_PARAM,
    ApiBody({ schema: { type: 'object', ...body } }),
    NUMBER_ANSWER,
    ApiLeafErrors(...statuses),
  );
}

/**
 * Gapless series over HTTP (docs/gapless.md, "Routes, CLI and operations"): reserve a number under an idempotency
 * key, then confirm or void it; each call idempotent, JSON in and out. Client routes (with
 * `LEAF_CLIENT_TOKENS`, a token allowed `gapless` and the series); 404 `LEAF_MODE_DISABLED`
 * without `LEAF_GAPLESS`. Every argument is checked before anything is queried.
 */
@ApiTags('gapless')
@Controller('api/gapless')
export class GaplessController extends ModeRoutes('gapless', GaplessNumberService) {
  @NumberRoute(
    'reserve',
    'one',
    'The number a key holds, reserved now for ttlMs if the key is new',
    { required: ['key'], properties: { key: KEY, ttlMs: { type: 'integer', minimum: 1 } } },
    [400, 404, 409, 410, 503],
  )
  async reserve(@Param('series') series: string, @Body() raw: unknown): Promise<GaplessNumberJson> {
    const body = objectBody(raw, ['key', 'ttlMs']);
    const ttlMs = body.ttlMs as number | undefined;
    return gaplessNumberJson(await this.service.reserve(series, body.key as string, ttlMs));
  }

  @NumberRoute(
    'confirm',
    'none',
    'Confirm the number a key reserved (idempotent)',
    { required: ['number', 'key'], properties: { number: NUMBER, key: KEY } },
    [400, 404, 409, 410, 503],
  )
  async confirm(@Param('series') series: string, @Body() raw: unknown): Promise<GaplessNumberJson> {
    const body = objectBody(raw, ['number', 'key']);
    const number = numberField(body);
    return gaplessNumberJson(await this.service.confirm(series, number, body.key as string));
  }

  @NumberRoute(
    'void',
    'none',
    'Void the number a key reserved, with a reason (idempotent)',
    {
      required: ['number', 'key', 'reason'],
      properties: { number: NUMBER, key: KEY, reason: { type: 'string', maxLength: 256 } },
    },
    [400, 404, 409, 503],
  )
  async void(@Param('series') series: string, @Body() raw: unknown): Promise<GaplessNumberJson> {
    const body = objectBody(raw, ['number', 'key', 'reason']);
    const number = numberField(body);
    const { key, reason } = body as { key: string; reason: string };
    return gaplessNumberJson(await this.service.void(series, number, key, reason));
  }
}
