import { Inject, Injectable, Optional } from '@nestjs/common';
import { HealthIndicatorService, type HealthIndicatorResult } from '@nestjs/terminus';
import { SnowflakeService } from '../snowflake/snowflake.service';
import { requireHealthDependencies } from './health-dependencies';

/**
 * Readiness of snowflake mode: up when an ID can be issued now (worker started, clock not
 * behind, within a valid time lease). Never throws; a disabled mode reports up with
 * `enabled: false`.
 */
@Injectable()
export class SnowflakeHealthIndicator {
  private readonly health: HealthIndicatorService;
  private readonly snowflake: SnowflakeService;

  /**
   * @throws {LeafConfigurationError} when provided in a module that sees no `SnowflakeService`
   *   (it does not import `LeafModule`, which is not `isGlobal`) or no `TerminusModule`.
   */
  constructor(
    @Optional() @Inject(HealthIndicatorService) health: HealthIndicatorService | null,
    @Optional() @Inject(SnowflakeService) snowflake: SnowflakeService | null,
  ) {
    [this.health, this.snowflake] = requireHealthDependencies(
      'SnowflakeHealthIndicator',
      health,
      'SnowflakeService',
      snowflake,
    );
  }

  /** Terminus check under `key`. */
  isHealthy<const Key extends string = 'snowflake'>(
    key: Key = 'snowflake' as Key,
  ): HealthIndicatorResult<Key> {
    const indicator = this.health.check(key);
    try {
      if (!this.snowflake.enabled) return indicator.up({ enabled: false });
      const status = this.snowflake.status();
      const worker = status.worker;
      const details: Record<string, unknown> = worker
        ? {
            workerId: worker.workerId,
            mode: worker.mode,
            reservedUntil: worker.lease.reservedUntil,
            zookeeper: worker.zookeeper?.connected ?? null,
          }
        : {};
      if (!status.readiness.ready)
        return indicator.down({ ...details, message: status.readiness.reason });
      return indicator.up(details);
    } catch (error) {
      return indicator.down({ message: error instanceof Error ? error.message : String(error) });
    }
  }
}
