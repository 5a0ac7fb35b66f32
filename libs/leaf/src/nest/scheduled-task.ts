import { Logger } from '@nestjs/common';
import type { SchedulerRegistry } from '@nestjs/schedule';
import { messageOf } from '../core/errors/leaf.error';

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

/**
 * A {@link ScheduledTask} whose failures are logged once per streak, under `context`: the
 * first failure logs `warning(message)` (null: nothing), the next success `<label> recovered`.
 */
export function streakLoggedTask(
  scheduler: SchedulerRegistry,
  name: string,
  context: string,
  label: string,
  task: () => Promise<void>,
  warning: (message: string) => string | null,
): ScheduledTask {
  const logger = new Logger(context);
  let failing = false;
  return new ScheduledTask(
    scheduler,
    name,
    async () => {
      await task();
      if (failing) logger.log(`${label} recovered`);
      failing = false;
    },
    (error) => {
      if (failing) return;
      failing = true;
      const text = warning(messageOf(error));
      if (text !== null) logger.warn(text);
    },
  );
}
