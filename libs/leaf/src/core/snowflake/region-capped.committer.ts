import type { RegionLease } from './region-lease';
import type { LeaseCommit, LeaseCommitter } from './time-lease';

/**
 * The worker's {@link LeaseCommitter} with the region lease on top (docs/design.md,
 * "Regions"): every bound granted is also at most what the region lease proves, so the one
 * time lease and the one generator check cover both; past it the generator refuses
 * (`LEAF_TIME_LEASE_UNAVAILABLE`, naming the region lease) and readiness goes down.
 */
export class RegionCappedCommitter implements LeaseCommitter {
  constructor(
    private readonly inner: LeaseCommitter,
    private readonly region: RegionLease,
  ) {}

  /** See {@link LeaseCommitter.commit}: the inner commit, then capped at the region's bound. */
  async commit(target: number, now: number, current: number): Promise<LeaseCommit> {
    const cap = this.region.bound;
    const result = await this.inner.commit(Math.min(target, Math.max(cap, current)), now, current);
    const capNow = this.region.bound;
    if (result.granted <= capNow && capNow >= target) return result;
    return {
      granted: Math.min(result.granted, capNow),
      degraded: this.region.problem(Number.POSITIVE_INFINITY) ?? result.degraded,
    };
  }

  /** See {@link LeaseCommitter.release}. */
  release(final: number, now: number): Promise<void> {
    return this.inner.release(final, now);
  }
}
