import type { Clock } from '../core/clock';
import {
  regionClaimStep,
  type HeldRegionLease,
  type RegionClaimRequest,
  type RegionClaimResult,
  type RegionLeaseRow,
  type RegionRegistry,
} from '../core/snowflake/region-registry.port';

/**
 * The region registry in memory, on `clock` as the registry's clock, with the semantics of
 * the TypeORM registry. {@link failWith} makes every call fail (a registry cut off);
 * {@link stall} holds every call until {@link resume}.
 */
export class InMemoryRegionRegistry implements RegionRegistry {
  readonly description = 'in-memory leaf_region_lease';
  private readonly rows = new Map<string, RegionLeaseRow>();
  private failure: Error | null = null;
  private stalled: Array<() => void> | null = null;

  constructor(private readonly clock: Clock) {}

  /** Makes every call fail with `error` (`null`: succeed again). */
  failWith(error: Error | null): void {
    this.failure = error;
  }

  /** Holds every call from now on until {@link resume}. */
  stall(): void {
    this.stalled ??= [];
  }

  /** Lets the held calls run, in order. */
  resume(): void {
    const held = this.stalled ?? [];
    this.stalled = null;
    for (const release of held) release();
  }

  /** Writes `row` of namespace `name` as it is (test set-up). */
  seed(name: string, row: RegionLeaseRow): void {
    this.rows.set(`${name}/${row.dataCenterId}`, row);
  }

  async claim(request: RegionClaimRequest): Promise<RegionClaimResult> {
    await this.gate();
    // No await from here on: read and write are one step, as under the row lock.
    const now = this.clock.now();
    const key = `${request.name}/${request.dataCenterId}`;
    const step = regionClaimStep(this.rows.get(key) ?? null, request, now);
    if ('held' in step) return step;
    this.rows.set(key, step.row);
    return { claimed: step.claimed };
  }

  async renew(lease: HeldRegionLease, leaseMs: number, horizon: number): Promise<boolean> {
    await this.gate();
    const key = `${lease.name}/${lease.dataCenterId}`;
    const row = this.rows.get(key);
    if (!row || row.region !== lease.region || row.epoch !== lease.epoch) return false;
    this.rows.set(key, {
      ...row,
      expiresAt: Math.max(row.expiresAt, this.clock.now() + leaseMs),
      horizon: Math.max(row.horizon, horizon),
    });
    return true;
  }

  async holder(name: string, dataCenterId: number): Promise<RegionLeaseRow | null> {
    await this.gate();
    return this.rows.get(`${name}/${dataCenterId}`) ?? null;
  }

  private async gate(): Promise<void> {
    if (this.stalled) await new Promise<void>((resolve) => this.stalled!.push(resolve));
    if (this.failure) throw this.failure;
  }
}
