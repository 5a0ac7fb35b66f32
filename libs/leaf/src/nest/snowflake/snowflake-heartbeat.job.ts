import {
  Inject,
  Injectable,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import type { SchedulerRegistry } from '@nestjs/schedule';
import { streakLoggedTask, type ScheduledTask } from '../scheduled-task';
import { LEAF_JOB_NAMES, LEAF_RESOLVED_OPTIONS, LEAF_SCHEDULER } from '../leaf.constants';
import type { ResolvedLeafOptions } from '../leaf-options.interface';
import { modeOptions } from '../leaf-modes';
import { SnowflakeService } from './snowflake.service';

/**
 * Renews the region's lease on the data-centre ID every `snowflake.region.renewIntervalMs`
 * (with `snowflake.region`), and extends the snowflake time lease every `snowflake.heartbeatIntervalMs` through
 * `SchedulerRegistry` (the application owns `ScheduleModule.forRoot()`): writes the time and
 * `reservedUntil = now + leaseMs` to the worker's ZooKeeper node and the local state file.
 * One heartbeat at a time; failures are logged (the lease itself decides when to fail closed).
 */
@Injectable()
export class SnowflakeHeartbeatJob implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly task: ScheduledTask;
  /** Renews the region's lease every `snowflake.region.renewIntervalMs` (null without a region). */
  private readonly regionTask: ScheduledTask | null;

  constructor(
    @Inject(LEAF_RESOLVED_OPTIONS) private readonly options: ResolvedLeafOptions,
    snowflake: SnowflakeService,
    @Inject(LEAF_SCHEDULER) scheduler: SchedulerRegistry,
  ) {
    this.task = streakLoggedTask(
      scheduler,
      LEAF_JOB_NAMES.snowflakeHeartbeat(options.name),
      SnowflakeHeartbeatJob.name,
      'Snowflake heartbeat',
      () => snowflake.heartbeat(),
      // Once per failure streak, not every heartbeat; "recovered" closes the streak.
      (message) =>
        `Snowflake heartbeat failed: ${message}. ` +
        'IDs are issued only within the current time lease (then 503 LEAF_TIME_LEASE_UNAVAILABLE); ' +
        'check the coordination store (ZooKeeper, or the database holding leaf_worker_lease) and that LEAF_STATE_DIR is writable. Logged once until it recovers.',
    );
    this.regionTask = options.snowflake?.region
      ? streakLoggedTask(
          scheduler,
          LEAF_JOB_NAMES.snowflakeRegion(options.name),
          SnowflakeHeartbeatJob.name,
          'Region lease renewal',
          () => snowflake.renewRegion(),
          (message) =>
            `${message}. The region keeps issuing until then (readiness shows how long is left); make the region registry reachable. Logged once until it recovers.`,
        )
      : null;
  }

  /** Registers the interval. */
  onApplicationBootstrap(): void {
    const snowflake = modeOptions(this.options, 'snowflake');
    this.task.start(snowflake.heartbeatIntervalMs);
    if (snowflake.region) this.regionTask?.start(snowflake.region.renewIntervalMs);
  }

  /** Removes the intervals and waits for the runs in flight. */
  async beforeApplicationShutdown(): Promise<void> {
    await Promise.all([this.task.stop(), this.regionTask?.stop()]);
  }

  /** One heartbeat; never throws. Overlapping ticks share the heartbeat in flight. */
  run(): Promise<void> {
    return this.task.run();
  }
}
