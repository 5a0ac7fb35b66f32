/**
 * Runs at most `limit` async tasks at once; the rest wait in FIFO order.
 * Used to bound how many segment loads hit the database together.
 */
export class ConcurrencyLimiter {
  private active = 0;
  private readonly queue: Array<() => void> = [];

  constructor(private readonly limit: number) {}

  /** Number of tasks running now. */
  get running(): number {
    return this.active;
  }

  /** Number of tasks waiting for a slot. */
  get waiting(): number {
    return this.queue.length;
  }

  /** Runs `task` when a slot is free; the slot is released whatever the outcome. */
  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.active >= this.limit) {
      await new Promise<void>((resolve) => this.queue.push(resolve));
    } else {
      this.active++;
    }
    try {
      return await task();
    } finally {
      const next = this.queue.shift();
      // The slot passes straight to the next waiter, so `active` stays the same.
      if (next) next();
      else this.active--;
    }
  }
}
