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
import { SegmentService } from './segment.service';

/**
 * Re-reads the tag list every `segment.refreshIntervalMs` through `SchedulerRegistry`
 * (the application owns `ScheduleModule.forRoot()`). One refresh at a time; errors are
 * logged and the previous list stays in force.
 */
@Injectable()
export class TagRefreshJob implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(TagRefreshJob.name);
  private readonly name: string;
  private running: Promise<void> | null = null;

  constructor(
    @Inject(LEAF_RESOLVED_OPTIONS) private readonly options: ResolvedLeafOptions,
    private readonly segments: SegmentService,
    private readonly scheduler: SchedulerRegistry,
  ) {
    this.name = LEAF_JOB_NAMES.segmentRefresh(options.name);
  }

  onApplicationBootstrap(): void {
    if (!this.options.segment) return;
    const timer = setInterval(() => void this.run(), this.options.segment.refreshIntervalMs);
    this.scheduler.addInterval(this.name, timer);
  }

  async beforeApplicationShutdown(): Promise<void> {
    if (this.scheduler.doesExist('interval', this.name)) this.scheduler.deleteInterval(this.name);
    await this.running;
  }

  /** One refresh; never throws. Overlapping ticks share the refresh in flight. */
  run(): Promise<void> {
    this.running ??= this.segments
      .refreshTags()
      .catch((error: unknown) => this.logger.warn(`Tag refresh failed: ${String(error)}`))
      .finally(() => {
        this.running = null;
      });
    return this.running;
  }
}
