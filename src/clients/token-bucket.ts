/**
 * A token bucket counted in IDs: it holds at most `burst` and refills at `perSecond`,
 * continuously. {@link take} either takes `cost` at once or takes nothing and says how long
 * until it could: a refused request leaves the bucket as it was.
 */
export class TokenBucket {
  private tokens: number;
  private last: number;

  /** @param now the current time in ms, from a monotonic clock (the bucket starts full). */
  constructor(
    readonly perSecond: number,
    readonly burst: number,
    now: number,
  ) {
    this.tokens = burst;
    this.last = now;
  }

  /**
   * Takes `cost` (at most `burst`) if the bucket holds it: returns 0. Otherwise takes nothing
   * and returns the milliseconds until it will hold `cost`.
   */
  take(cost: number, now: number): number {
    if (now > this.last) {
      this.tokens = Math.min(this.burst, this.tokens + ((now - this.last) * this.perSecond) / 1000);
      this.last = now;
    }
    if (this.tokens >= cost) {
      this.tokens -= cost;
      return 0;
    }
    return ((cost - this.tokens) * 1000) / this.perSecond;
  }

  /** What the bucket holds at `now` (for tests and monitoring). */
  available(now: number): number {
    const elapsed = Math.max(0, now - this.last);
    return Math.min(this.burst, this.tokens + (elapsed * this.perSecond) / 1000);
  }
}
