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
import { SegmentService } from './segment.service';

/** First retry of the tag-list load after a failed start; doubles up to {@link JOIN_MAX_DELAY_MS}. */
const JOIN_FIRST_DELAY_MS = 500;
const JOIN_MAX_DELAY_MS = 15_000;
/** Period of the issue-rate sampling behind the readiness runway. */
const RATE_SAMPLE_MS = 1000;

/**
 * Re-reads the tag list every `segment.refreshIntervalMs` through `SchedulerRegistry`
 * (the application owns `ScheduleModule.forRoot()`). One refresh at a time; a failure is
 * logged once per streak and the previous list stays in force.
 *
 * While the tag list has never been read (database unreachable at start), it also retries
 * with back-off (0.5 s doubling to 15 s, capped by the refresh period) until segment mode
 * joins; and it samples each tag's issue rate every second for the readiness runway.
 */
@Injectable()
export class TagRefreshJob implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly task: ScheduledTask;
  private stopped = false;

  constructor(
    @Inject(LEAF_RESOLVED_OPTIONS) private readonly options: ResolvedLeafOptions,
    private readonly segments: SegmentService,
    @Inject(LEAF_SCHEDULER) private readonly scheduler: SchedulerRegistry,
  ) {
    this.task = streakLoggedTask(
      scheduler,
      LEAF_JOB_NAMES.segmentRefresh(options.name),
      TagRefreshJob.name,
      'Tag refresh',
      () => segments.refreshTags(),
      // Before the first successful read, SegmentService has said what is wrong already.
      (message) =>
        segments.initialized
          ? `Tag refresh failed: ${message} ` +
            '(the previous tag list stays in force; retried every refresh period)'
          : null,
    );
  }

  /** Registers the intervals, and the join retries if needed. */
  onApplicationBootstrap(): void {
    this.task.start(modeOptions(this.options, 'segment').refreshIntervalMs);
    const sampler = setInterval(() => this.segments.sampleRates(), RATE_SAMPLE_MS);
    sampler.unref();
    this.scheduler.addInterval(LEAF_JOB_NAMES.segmentRate(this.options.name), sampler);
    if (!this.segments.initialized) this.scheduleJoin(JOIN_FIRST_DELAY_MS);
  }

  /** Removes the intervals and a pending retry, and waits for a refresh in flight. */
  beforeApplicationShutdown(): Promise<void> {
    this.stopped = true;
    const rate = LEAF_JOB_NAMES.segmentRate(this.options.name);
    const join = LEAF_JOB_NAMES.segmentJoin(this.options.name);
    if (this.scheduler.doesExist('interval', rate)) this.scheduler.deleteInterval(rate);
    if (this.scheduler.doesExist('timeout', join)) this.scheduler.deleteTimeout(join);
    return this.task.stop();
  }

  /** One retry of the first tag-list load after `delayMs`, then the next with twice the delay. */
  private scheduleJoin(delayMs: number): void {
    const name = LEAF_JOB_NAMES.segmentJoin(this.options.name);
    const cap = Math.min(JOIN_MAX_DELAY_MS, modeOptions(this.options, 'segment').refreshIntervalMs);
    const timer = setTimeout(() => {
      if (this.scheduler.doesExist('timeout', name)) this.scheduler.deleteTimeout(name);
      void this.task.run().then(() => {
        if (!this.stopped && !this.segments.initialized)
          this.scheduleJoin(Math.min(delayMs * 2, cap));
      });
    }, delayMs);
    this.scheduler.addTimeout(name, timer);
  }

  /** One refresh; never throws. Overlapping ticks share the refresh in flight. */
  run(): Promise<void> {
    return this.task.run();
  }
}
