import { Controller, Get, Optional, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiQuery, ApiTags } from '@nestjs/swagger';
import { ApiLeafErrors, ID_SCHEMA } from '../openapi';
import { SnowflakeService } from 'nestjs-leaf';
import { InvalidArgumentError } from 'nestjs-leaf/errors';
import { modeService } from './id-routes';

/** Leaf's decode answer (all strings), followed by our own fields. */
export interface DecodeAnswer {
  /** `"<ms>(<yyyy-MM-dd HH:mm:ss.SSS>)"`, the date in UTC. */
  timestamp: string;
  workerId: string;
  sequenceId: string;
  id: string;
  timestampMs: string;
  isoDate: string;
  /** The data-centre field ("0" in layouts without data-centre bits). */
  dataCenterId: string;
}

function leafDate(date: Date): string {
  // Leaf formats with Java's yyyy-MM-dd HH:mm:ss.SSS; we print UTC so every instance agrees.
  return date.toISOString().replace('T', ' ').replace('Z', '');
}

/** Leaf-server's operator endpoint: what a snowflake ID says about itself. */
@ApiTags('snowflake')
@Controller()
export class DecodeController {
  constructor(@Optional() private readonly snowflake?: SnowflakeService) {}

  /**
   * `GET /decodeSnowflakeId?snowflakeId=N`.
   * @throws {InvalidArgumentError} for a missing, non-decimal or out-of-range ID (400).
   * @throws {ModeDisabledError} with snowflake mode off (404).
   */
  @Get('decodeSnowflakeId')
  @ApiOperation({ summary: 'Split a snowflake ID into timestamp, worker ID and sequence' })
  @ApiQuery({ name: 'snowflakeId', required: true, schema: ID_SCHEMA })
  @ApiOkResponse({
    schema: {
      type: 'object',
      properties: {
        timestamp: { type: 'string', example: '1796212352749(2026-12-02 11:52:32.749)' },
        workerId: { type: 'string', pattern: '^[0-9]+$' },
        sequenceId: { type: 'string', pattern: '^[0-9]+$' },
        dataCenterId: { type: 'string', pattern: '^[0-9]+$' },
        id: ID_SCHEMA,
        timestampMs: { type: 'string', pattern: '^[0-9]+$' },
        isoDate: { type: 'string', format: 'date-time' },
      },
    },
  })
  @ApiLeafErrors(400, 404)
  decode(@Query('snowflakeId') raw: unknown): DecodeAnswer {
    if (typeof raw !== 'string' || !/^\d{1,19}$/.test(raw)) {
      throw new InvalidArgumentError(
        'snowflakeId must be a decimal integer in 0..2^63-1',
        'snowflakeId',
      );
    }
    const decoded = modeService(this.snowflake, 'snowflake').decode(raw);
    return {
      timestamp: `${decoded.timestamp}(${leafDate(decoded.date)})`,
      workerId: String(decoded.workerId),
      sequenceId: String(decoded.sequence),
      id: raw.replace(/^0+(?=\d)/, ''),
      timestampMs: String(decoded.timestamp),
      isoDate: decoded.date.toISOString(),
      dataCenterId: String(decoded.dataCenterId),
    };
  }
}
