/**
 * The source of time for every component. Injected so that tests can drive it
 * (see `FakeClock` in `testing/`).
 */
export interface Clock {
  /** Milliseconds since the Unix epoch. */
  now(): number;
  /** Resolves after `ms` milliseconds without blocking the event loop. */
  sleep(ms: number): Promise<void>;
}

/** The real clock: `Date.now()` and a timer. */
export const systemClock: Clock = {
  now: () => Date.now(),
  sleep: (ms: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms))),
};
