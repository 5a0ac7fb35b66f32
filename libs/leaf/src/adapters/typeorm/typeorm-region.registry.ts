import type { DataSource } from 'typeorm';
import {
  regionClaimStep,
  type HeldRegionLease,
  type RegionClaimRequest,
  type RegionClaimResult,
  type RegionLeaseRow,
  type RegionRegistry,
} from '../../core/snowflake/region-registry.port';
import { regionLeaseStatements } from './region-lease.sql';
import { TypeormLeaseTable } from './typeorm-lease.table';

interface RawRow {
  data_center_id: number | string;
  region: string;
  epoch: string;
  expires_at: string;
  horizon: string;
  floor_ms: string;
}

function toRow(raw: RawRow): RegionLeaseRow {
  return {
    dataCenterId: Number(raw.data_center_id),
    region: raw.region,
    epoch: BigInt(raw.epoch),
    expiresAt: Number(raw.expires_at),
    horizon: Number(raw.horizon),
    floor: Number(raw.floor_ms),
  };
}

/**
 * The region registry `leaf_region_lease` on MySQL/MariaDB or PostgreSQL (docs/design.md,
 * "Regions"). A claim locks the row (`SELECT … FOR UPDATE`), reads the database's clock and
 * writes what {@link regionClaimStep} says; two claims inserting one new row make one fail on
 * the primary key, and it runs again. A renewal is conditional on region
 * and epoch ({@link TypeormLeaseTable}).
 */
export class TypeormRegionRegistry extends TypeormLeaseTable implements RegionRegistry {
  private readonly statements = regionLeaseStatements(this.dialect);

  /** @throws {LeafConfigurationError} for a driver other than mysql, mariadb or postgres. */
  constructor(dataSource: DataSource) {
    super(
      dataSource,
      'leaf_region_lease',
      (driver) =>
        `snowflake.region.dataSource: the region registry runs on MySQL/MariaDB or PostgreSQL (got driver "${driver}")`,
    );
  }

  claim(request: RegionClaimRequest): Promise<RegionClaimResult> {
    return this.claiming(async (runner) => {
      const [raw] = (await runner.query(this.statements.lock, [
        request.name,
        request.dataCenterId,
      ])) as RawRow[];
      const nowMs = await this.lockedNow(runner);
      const step = regionClaimStep(raw ? toRow(raw) : null, request, nowMs);
      if ('held' in step) return step;
      const { row } = step;
      const values = [row.region, row.epoch.toString(), row.expiresAt, row.horizon, row.floor];
      if (step.insert) {
        await runner.query(this.statements.insert, [request.name, row.dataCenterId, ...values]);
      } else {
        await runner.query(this.statements.write, [...values, request.name, row.dataCenterId]);
      }
      return { claimed: step.claimed };
    });
  }

  renew(lease: HeldRegionLease, leaseMs: number, horizon: number): Promise<boolean> {
    const held = [lease.name, lease.dataCenterId, lease.region, lease.epoch.toString()];
    return this.fenced(this.statements.renew, [leaseMs, horizon, ...held], async () => {
      const row = await this.holder(lease.name, lease.dataCenterId);
      return row !== null && row.region === lease.region && row.epoch === lease.epoch;
    });
  }

  async holder(name: string, dataCenterId: number): Promise<RegionLeaseRow | null> {
    const rows = (await this.dataSource.query(this.statements.one, [
      name,
      dataCenterId,
    ])) as RawRow[];
    return rows[0] ? toRow(rows[0]) : null;
  }
}
