import { Injectable } from '@nestjs/common';
import { SnowflakeService } from '../snowflake/snowflake.service';
import { modeHealthIndicator, type ModeHealth } from './health-dependencies';

/**
 * Readiness of snowflake mode: up when an ID can be issued now (worker started, clock not
 * behind, within a valid time lease and region lease). Never throws; a disabled mode reports up with
 * `enabled: false`.
 */
@Injectable()
export class SnowflakeHealthIndicator extends modeHealthIndicator('snowflake', SnowflakeService) {
  protected override check(snowflake: SnowflakeService): ModeHealth {
    const status = snowflake.status();
    const worker = status.worker;
    const details: Record<string, unknown> = worker
      ? {
          workerId: worker.workerId,
          mode: worker.mode,
          // Where the worker ID is coordinated: zookeeper, database, or none (explicit/ordinal alone).
          coordination: worker.zookeeper ? 'zookeeper' : worker.database ? 'database' : 'none',
          reservedUntil: worker.lease.reservedUntil,
          zookeeper: worker.zookeeper?.connected ?? null,
          ...(worker.database
            ? { database: worker.database.store, epoch: worker.database.epoch }
            : {}),
          // The region's lease on the data-centre ID: how long the last renewal proved.
          ...(worker.region
            ? {
                region: {
                  name: worker.region.region,
                  dataCenterId: worker.region.dataCenterId,
                  provenUntil: worker.region.provenUntil,
                  leftMs: worker.region.leftMs,
                  lastError: worker.region.lastError,
                },
              }
            : {}),
        }
      : {};
    return { ready: status.readiness.ready, reason: status.readiness.reason ?? null, details };
  }
}
