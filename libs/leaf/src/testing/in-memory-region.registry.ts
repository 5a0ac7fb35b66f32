import type { Clock } from '../core/clock';
import {
  regionClaimStep,
  type HeldRegionLease,
  type RegionClaimRequest,
  type RegionClaimResult,
  type RegionLeaseRow,
  type RegionRegistry,
} from '../core/snowflake/region-registry.port';
import { InMemoryFaults } from './in-memory-faults';

/**
 * The region registry in memory, on `clock` as the registry's clock, with the semantics of
 * the TypeORM registry. {@link failWith} makes every call fail (a registry cut off);
 * {@link stall} holds every call until {@link resume}.
 */
export class InMemoryRegionRegistry extends InMemoryFaults implements RegionRegistry {
  readonly description = 'in-memory leaf_region_lease';
  private readonly rows = new Map<string, RegionLeaseRow>();

  constructor(private readonly clock: Clock) {
    super();
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
}
