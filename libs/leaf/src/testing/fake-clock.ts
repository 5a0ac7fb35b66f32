import type { Clock } from '../core/clock';

/**
 * A clock tests move by hand. `sleep(ms)` resolves when `advance()` moves the time past
 * its deadline (or at once for `ms <= 0`), so timing logic runs without real waiting.
 */
export class FakeClock implements Clock {
  private sleepers: Array<{ until: number; resolve: () => void }> = [];

  constructor(private current = 1_700_000_000_000) {}

  now(): number {
    return this.current;
  }

  sleep(ms: number): Promise<void> {
    if (ms <= 0) return Promise.resolve();
    return new Promise((resolve) => this.sleepers.push({ until: this.current + ms, resolve }));
  }

  /** Number of sleeps not yet resolved. */
  get pendingSleeps(): number {
    return this.sleepers.length;
  }

  /**
   * Resolves `promise`, moving the time `stepMs` forward whenever something sleeps on this
   * clock (start-up waits, next-millisecond waits) once everything else has run.
   */
  async drive<T>(promise: Promise<T>, stepMs = 100): Promise<T> {
    let settled = false;
    const result = promise.finally(() => (settled = true));
    result.catch(() => undefined);
    while (!settled) {
      await new Promise((resolve) => setImmediate(resolve));
      if (!settled && this.pendingSleeps > 0) this.advance(stepMs);
    }
    return result;
  }

  /** Moves the time forward (or back, with a negative `ms`) and wakes the sleepers that are due. */
  advance(ms: number): void {
    this.set(this.current + ms);
  }

  /** Sets the time and wakes the sleepers that are due. */
  set(time: number): void {
    this.current = time;
    const due = this.sleepers.filter((sleeper) => sleeper.until <= time);
    this.sleepers = this.sleepers.filter((sleeper) => sleeper.until > time);
    for (const sleeper of due) sleeper.resolve();
  }
}
