import { AllocationError, AllocationRegressedError } from '../errors/allocation.error';
import { SegmentNotReadyError } from '../errors/segment-not-ready.error';

/**
 * How long an issuer's allocations have failed with its buffer dry: past
 * `resignAfterFailingMs`, and still going, it hands its group over (`SequenceGroup`).
 */
export class FailureStreak {
  /** Since when the allocations have failed (monotonic), or null. */
  private since: number | null = null;
  /** The latest of those failures (monotonic). */
  private lastAt = 0;

  constructor(
    private readonly limitMs: number,
    private readonly monotonic: () => number,
  ) {}

  /**
   * Records a failed issue. Only failures another instance may do better on count: ranges that
   * cannot be allocated (database unreachable, high-water mark unavailable). A refused range (a
   * regression) does not: a successor without this instance's memory of it would serve it.
   */
  failed(error: unknown): void {
    if (error instanceof AllocationRegressedError) return;
    if (!(error instanceof AllocationError || error instanceof SegmentNotReadyError)) return;
    const now = this.monotonic();
    // A failure long after the previous one starts a new streak.
    const stale = now - this.lastAt >= this.limitMs;
    if (this.since === null || stale) this.since = now;
    this.lastAt = now;
  }

  /** An issue succeeded, or a new term starts. */
  clear(): void {
    this.since = null;
  }

  /**
   * Why the issuer should hand over (how long the streak has lasted) when it is old enough and
   * its latest failure recent; else null.
   */
  handOverReason(): string | null {
    const since = this.since;
    const now = this.monotonic();
    const limit = this.limitMs;
    if (since !== null && now - since >= limit && now - this.lastAt < Math.max(limit, 1)) {
      return `its allocations have failed for ${Math.round(now - since)} ms`;
    }
    return null;
  }
}
