import type { SchedulerRegistry } from '@nestjs/schedule';

/**
 * A periodic task registered in `SchedulerRegistry` under a namespaced name. One run at a
 * time: a tick that finds a run in flight shares it. `task` must not throw; whatever it
 * rejects with goes to `onError`. Used by the library's jobs, which only start and stop it.
 */
export class ScheduledTask {
  private running: Promise<void> | null = null;

  constructor(
    private readonly scheduler: SchedulerRegistry,
    /** Name in `SchedulerRegistry`, e.g. `leaf:leaf:segment:refresh`. */
    readonly name: string,
    private readonly task: () => Promise<void>,
    private readonly onError: (error: unknown) => void,
  ) {}

  /** Registers the interval. */
  start(periodMs: number): void {
    const timer = setInterval(() => void this.run(), periodMs);
    this.scheduler.addInterval(this.name, timer);
  }

  /** Removes the interval and waits for a run in flight. */
  async stop(): Promise<void> {
    if (this.scheduler.doesExist('interval', this.name)) this.scheduler.deleteInterval(this.name);
    await this.running;
  }

  /** One run; never rejects. */
  run(): Promise<void> {
    this.running ??= this.task()
      .catch(this.onError)
      .finally(() => {
        this.running = null;
      });
    return this.running;
  }
}
