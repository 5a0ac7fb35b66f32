import type { Clock } from '../clock';
import { ClockMovedBackwardsError } from '../errors/clock-moved-backwards.error';
import type { LeafObserver } from '../leaf-observer';

/**
 * Leaf's runtime clock check, plus the start-up wait for the clock to pass a bound.
 *
 * A clock behind the last issued millisecond by at most `toleranceMs` is waited out
 * (twice the offset, as Leaf does); anything else is an explicit error, never an ID.
 */
export class ClockGuard {
  constructor(
    private readonly clock: Clock,
    /** Largest step back that is waited out. @default 5 in the module options */
    readonly toleranceMs: number,
    /** Told of every step back (metrics, logs). */
    private readonly observer: LeafObserver | null = null,
  ) {}

  /**
   * Called when the clock reads earlier than `last`. Waits `2 × offset` if the offset is
   * within tolerance and returns the new reading once it is no longer behind.
   * @throws {ClockMovedBackwardsError} `leafCode -3` when the offset exceeds the tolerance,
   *   `-1` when the clock is still behind after the wait.
   */
  async waitOutBackwards(last: number): Promise<number> {
    const now = this.clock.now();
    if (now >= last) return now;
    const offset = last - now;
    if (offset > this.toleranceMs) {
      this.observer?.clockBackwards?.(offset, 'refused');
      throw new ClockMovedBackwardsError(offset, last, now, false);
    }
    await this.clock.sleep(offset * 2);
    const after = this.clock.now();
    if (after < last) {
      this.observer?.clockBackwards?.(last - after, 'refused');
      throw new ClockMovedBackwardsError(last - after, last, after, true);
    }
    this.observer?.clockBackwards?.(offset, 'waited');
    return after;
  }
}

/** Outcome of {@link waitUntilPast}. */
export type WaitUntilPastResult =
  | { readonly ok: true; readonly now: number; readonly waitedMs: number }
  | { readonly ok: false; readonly now: number; readonly offsetMs: number };

/**
 * Waits (with `clock.sleep`, never spinning) until the clock reads strictly later than
 * `bound`, if that takes at most `maxWaitMs`. Re-reads the clock after the wait, so a clock
 * that was stepped back meanwhile is caught.
 */
export async function waitUntilPast(
  clock: Clock,
  bound: number,
  maxWaitMs: number,
): Promise<WaitUntilPastResult> {
  const start = clock.now();
  let now = start;
  // A sleep can end a little early on some timers, so re-check a few times within the budget.
  for (let attempt = 0; attempt < 3 && now <= bound; attempt++) {
    const offset = bound - now + 1;
    if (now - start + offset > maxWaitMs) break;
    await clock.sleep(offset);
    now = clock.now();
  }
  if (now > bound) return { ok: true, now, waitedMs: Math.max(0, now - start) };
  return { ok: false, now, offsetMs: bound - now + 1 };
}
