import { Controller, Get } from '@nestjs/common';
import { HealthCheck, HealthCheckService, type HealthCheckResult } from '@nestjs/terminus';
import { SegmentHealthIndicator, SnowflakeHealthIndicator } from 'nestjs-leaf/health';

/** Liveness (no dependencies) and readiness (able to issue IDs now). */
@Controller('health')
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly segment: SegmentHealthIndicator,
    private readonly snowflake: SnowflakeHealthIndicator,
  ) {}

  @Get('live')
  @HealthCheck()
  live(): Promise<HealthCheckResult> {
    return this.health.check([]);
  }

  @Get('ready')
  @HealthCheck()
  ready(): Promise<HealthCheckResult> {
    return this.health.check([
      () => this.segment.isHealthy('segment'),
      () => this.snowflake.isHealthy('snowflake'),
    ]);
  }
}
