import {
  Inject,
  Injectable,
  Logger,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import type { SchedulerRegistry } from '@nestjs/schedule';
import { ScheduledTask } from '../scheduled-task';
import { LEAF_JOB_NAMES, LEAF_RESOLVED_OPTIONS, LEAF_SCHEDULER } from '../leaf.constants';
import type { ResolvedLeafOptions } from '../leaf-options.interface';
import { SegmentService } from './segment.service';

/**
 * Re-reads the tag list every `segment.refreshIntervalMs` through `SchedulerRegistry`
 * (the application owns `ScheduleModule.forRoot()`). One refresh at a time; errors are
 * logged and the previous list stays in force.
 */
@Injectable()
export class TagRefreshJob implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(TagRefreshJob.name);
  private readonly task: ScheduledTask;

  constructor(
    @Inject(LEAF_RESOLVED_OPTIONS) private readonly options: ResolvedLeafOptions,
    segments: SegmentService,
    @Inject(LEAF_SCHEDULER) scheduler: SchedulerRegistry,
  ) {
    this.task = new ScheduledTask(
      scheduler,
      LEAF_JOB_NAMES.segmentRefresh(options.name),
      () => segments.refreshTags(),
      (error) => this.logger.warn(`Tag refresh failed: ${String(error)}`),
    );
  }

  /** Registers the interval (nothing when segment mode is off). */
  onApplicationBootstrap(): void {
    if (this.options.segment) this.task.start(this.options.segment.refreshIntervalMs);
  }

  /** Removes the interval and waits for a refresh in flight. */
  beforeApplicationShutdown(): Promise<void> {
    return this.task.stop();
  }

  /** One refresh; never throws. Overlapping ticks share the refresh in flight. */
  run(): Promise<void> {
    return this.task.run();
  }
}
