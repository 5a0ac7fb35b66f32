import { Controller, Get, Module } from '@nestjs/common';
import { HealthCheck, HealthCheckService, TerminusModule } from '@nestjs/terminus';
import { SegmentHealthIndicator, SnowflakeHealthIndicator } from 'nestjs-leaf/health';

@Controller('health')
class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly segment: SegmentHealthIndicator,
    private readonly snowflake: SnowflakeHealthIndicator,
  ) {}

  @Get()
  @HealthCheck()
  check() {
    return this.health.check([
      () => this.segment.isHealthy('segment'),
      () => this.snowflake.isHealthy('snowflake'),
    ]);
  }
}

/** The user's own health module: it does not import LeafModule (registered with isGlobal). */
@Module({
  imports: [TerminusModule],
  controllers: [HealthController],
  providers: [SegmentHealthIndicator, SnowflakeHealthIndicator],
})
export class HealthModule {}
