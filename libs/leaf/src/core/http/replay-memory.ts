/**
 * The nonces of the signed requests accepted within the validity window, so that a request
 * seen before is refused (docs/security.md, "Peers"). Kept per second of the sender's time and
 * forgotten a second at a time once every time of that second is outside the window; a
 * request signed in a forgotten second is refused from then on (its nonce is no longer known).
 *
 * Bounded: at most `capacity` nonces. When full, the oldest second is forgotten early, so the
 * window shrinks for older requests instead of memory growing; requests signed now are still
 * taken unless their own second alone holds `capacity` nonces.
 */
export class ReplayMemory {
  private readonly seconds = new Map<number, Set<string>>();
  private count = 0;
  /** Requests signed before this instant (ms) are refused: their nonces may be forgotten. */
  private floorMs = Number.NEGATIVE_INFINITY;
  private prunedSecond = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly windowMs: number,
    private readonly capacity: number,
  ) {}

  /** Nonces remembered now. */
  get size(): number {
    return this.count;
  }

  /**
   * Remembers `nonce` of a request signed at `timeMs` (already checked to be within the
   * window of `nowMs`).
   * @returns false when it was seen before, or is too old to tell.
   */
  admit(nonce: string, timeMs: number, nowMs: number): boolean {
    this.prune(nowMs);
    if (timeMs < this.floorMs) return false;
    const second = Math.floor(timeMs / 1000);
    const seen = this.seconds.get(second);
    if (seen?.has(nonce)) return false;
    while (this.count >= this.capacity) {
      if (!this.forgetOldest(second)) return false;
    }
    if (seen) seen.add(nonce);
    else this.seconds.set(second, new Set([nonce]));
    this.count++;
    return true;
  }

  /** Forgets the seconds whose every time is outside the window (once per second of `nowMs`). */
  private prune(nowMs: number): void {
    const nowSecond = Math.floor(nowMs / 1000);
    if (nowSecond === this.prunedSecond) return;
    this.prunedSecond = nowSecond;
    for (const second of [...this.seconds.keys()]) {
      if (nowMs - (second * 1000 + 999) > this.windowMs) this.forget(second);
    }
  }

  /** Forgets the oldest second before `second`; false when there is none. */
  private forgetOldest(second: number): boolean {
    let oldest = Number.POSITIVE_INFINITY;
    for (const known of this.seconds.keys()) oldest = Math.min(oldest, known);
    if (oldest >= second) return false;
    this.forget(oldest);
    return true;
  }

  private forget(second: number): void {
    this.count -= this.seconds.get(second)!.size;
    this.seconds.delete(second);
    // Even a clock stepped back must not reopen a forgotten second to its replays.
    this.floorMs = Math.max(this.floorMs, (second + 1) * 1000);
  }
}
