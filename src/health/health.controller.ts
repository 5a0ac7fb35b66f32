import { Controller, Get } from '@nestjs/common';
import { ApiOkResponse, ApiServiceUnavailableResponse, ApiTags } from '@nestjs/swagger';
import { HealthCheck, HealthCheckService, type HealthCheckResult } from '@nestjs/terminus';
import type { LeafMode } from 'nestjs-leaf';
import {
  GaplessHealthIndicator,
  SegmentHealthIndicator,
  SequenceHealthIndicator,
  SnowflakeHealthIndicator,
} from 'nestjs-leaf/health';

/**
 * Liveness (no dependencies) and readiness (able to issue IDs now): combined, and per mode
 * (and for gapless series),
 * so that a load balancer can route each mode's traffic on its own readiness. A disabled
 * mode is up with `enabled: false`.
 */
@ApiTags('health')
@ApiOkResponse({ description: 'terminus result, `"status":"ok"`' })
@ApiServiceUnavailableResponse({
  description: 'terminus result, `"status":"error"` with the reason',
})
@Controller('health')
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly segment: SegmentHealthIndicator,
    private readonly snowflake: SnowflakeHealthIndicator,
    private readonly sequence: SequenceHealthIndicator,
    private readonly gapless: GaplessHealthIndicator,
  ) {}

  @Get('live')
  @HealthCheck()
  live(): Promise<HealthCheckResult> {
    return this.health.check([]);
  }

  @Get('ready')
  @HealthCheck()
  ready(): Promise<HealthCheckResult> {
    return this.check('segment', 'snowflake', 'sequence', 'gapless');
  }

  @Get('ready/segment')
  @HealthCheck()
  readySegment(): Promise<HealthCheckResult> {
    return this.check('segment');
  }

  @Get('ready/snowflake')
  @HealthCheck()
  readySnowflake(): Promise<HealthCheckResult> {
    return this.check('snowflake');
  }

  @Get('ready/sequence')
  @HealthCheck()
  readySequence(): Promise<HealthCheckResult> {
    return this.check('sequence');
  }

  /** Up exactly while gapless series can be served: their tables answered the last call. */
  @Get('ready/gapless')
  @HealthCheck()
  readyGapless(): Promise<HealthCheckResult> {
    return this.check('gapless');
  }

  private check(...names: (LeafMode | 'gapless')[]): Promise<HealthCheckResult> {
    return this.health.check(names.map((name) => () => this[name].isHealthy(name)));
  }
}
