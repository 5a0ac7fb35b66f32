import {
  Inject,
  Injectable,
  Logger,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { LEAF_JOB_NAMES, LEAF_RESOLVED_OPTIONS } from '../leaf.constants';
import type { ResolvedLeafOptions } from '../leaf-options.interface';
import { SnowflakeService } from './snowflake.service';

/**
 * Extends the snowflake time lease every `snowflake.heartbeatIntervalMs` through
 * `SchedulerRegistry` (the application owns `ScheduleModule.forRoot()`): writes the time and
 * `reservedUntil = now + leaseMs` to the worker's ZooKeeper node and the local state file.
 * One heartbeat at a time; failures are logged (the lease itself decides when to fail closed).
 */
@Injectable()
export class SnowflakeHeartbeatJob implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(SnowflakeHeartbeatJob.name);
  private readonly name: string;
  private running: Promise<void> | null = null;
  private failing = false;

  constructor(
    @Inject(LEAF_RESOLVED_OPTIONS) private readonly options: ResolvedLeafOptions,
    private readonly snowflake: SnowflakeService,
    private readonly scheduler: SchedulerRegistry,
  ) {
    this.name = LEAF_JOB_NAMES.snowflakeHeartbeat(options.name);
  }

  /** Registers the interval (nothing when snowflake mode is off). */
  onApplicationBootstrap(): void {
    if (!this.options.snowflake) return;
    const timer = setInterval(() => void this.run(), this.options.snowflake.heartbeatIntervalMs);
    this.scheduler.addInterval(this.name, timer);
  }

  /** Removes the interval and waits for a heartbeat in flight. */
  async beforeApplicationShutdown(): Promise<void> {
    if (this.scheduler.doesExist('interval', this.name)) this.scheduler.deleteInterval(this.name);
    await this.running;
  }

  /** One heartbeat; never throws. Overlapping ticks share the heartbeat in flight. */
  run(): Promise<void> {
    this.running ??= this.snowflake
      .heartbeat()
      .then(() => {
        if (this.failing) this.logger.log('Snowflake heartbeat recovered');
        this.failing = false;
      })
      .catch((error: unknown) => {
        this.failing = true;
        this.logger.warn(`Snowflake heartbeat failed: ${error instanceof Error ? error.message : String(error)}`);
      })
      .finally(() => {
        this.running = null;
      });
    return this.running;
  }
}
