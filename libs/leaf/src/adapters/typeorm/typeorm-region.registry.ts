import type { DataSource } from 'typeorm';
import { LeafConfigurationError } from '../../core/errors/leaf-configuration.error';
import {
  chooseRegionClaim,
  claimedResult,
  claimedRow,
  type HeldRegionLease,
  type RegionClaimRequest,
  type RegionClaimResult,
  type RegionLeaseRow,
  type RegionRegistry,
} from '../../core/snowflake/region-registry.port';
import { regionLeaseStatements } from './region-lease.sql';
import {
  changedRows,
  dialectOf,
  retryingRaces,
  type LockingTransactions,
  type SqlDialect,
} from './sql-dialect';

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

/** How many times a claim that lost a race (a duplicate key, a lock wait) runs again. */
const CLAIM_ATTEMPTS = 5;

/**
 * The region registry `leaf_region_lease` on MySQL/MariaDB or PostgreSQL (docs/design.md,
 * "Regions"). A claim is one READ COMMITTED transaction: lock the row (`SELECT … FOR UPDATE`),
 * read the database's clock, apply {@link chooseRegionClaim} and write {@link claimedRow}; two
 * claims inserting one new row make one fail on the primary key, and it runs again. A renewal
 * is one conditional `UPDATE` (region and epoch), so a deposed region changes nothing.
 */
export class TypeormRegionRegistry implements RegionRegistry {
  readonly description: string;
  private readonly dialect: SqlDialect;
  private readonly statements: ReturnType<typeof regionLeaseStatements>;
  private readonly transaction: LockingTransactions;

  /** @throws {LeafConfigurationError} for a driver other than mysql, mariadb or postgres. */
  constructor(private readonly dataSource: DataSource) {
    const dialect = dialectOf(dataSource);
    if (!dialect?.coordination)
      throw new LeafConfigurationError([
        `snowflake.region.dataSource: the region registry runs on MySQL/MariaDB or PostgreSQL (got driver "${dataSource.options.type}")`,
      ]);
    this.dialect = dialect;
    this.description = `${dialect.name} leaf_region_lease`;
    this.statements = regionLeaseStatements(dialect);
    this.transaction = dialect.lockingTransactions(
      dataSource,
      { lockWaitTimeoutSec: 5, idleTimeoutSec: 3 },
      'TypeormRegionRegistry',
    );
  }

  claim(request: RegionClaimRequest): Promise<RegionClaimResult> {
    return retryingRaces(this.dialect, CLAIM_ATTEMPTS, () =>
      this.transaction((runner) => this.claimIn(runner, request)),
    );
  }

  /**
   * A conditional `UPDATE`. No row affected is checked by reading the row (a MySQL connection
   * counts only rows changed).
   */
  async renew(lease: HeldRegionLease, leaseMs: number, horizon: number): Promise<boolean> {
    const held = [lease.name, lease.dataCenterId, lease.region, lease.epoch.toString()];
    const parameters = [leaseMs, horizon, ...held];
    if ((await changedRows(this.dataSource, this.statements.renew, parameters)) === 1) return true;
    const row = await this.holder(lease.name, lease.dataCenterId);
    return row !== null && row.region === lease.region && row.epoch === lease.epoch;
  }

  async holder(name: string, dataCenterId: number): Promise<RegionLeaseRow | null> {
    const rows = (await this.dataSource.query(this.statements.one, [
      name,
      dataCenterId,
    ])) as RawRow[];
    return rows[0] ? toRow(rows[0]) : null;
  }

  private async claimIn(
    runner: { query(sql: string, parameters?: unknown[]): Promise<unknown> },
    request: RegionClaimRequest,
  ): Promise<RegionClaimResult> {
    const [raw] = (await runner.query(this.statements.lock, [
      request.name,
      request.dataCenterId,
    ])) as RawRow[];
    // Read once the lock is held: a clock read before the wait would be stale.
    const [now] = (await runner.query(this.statements.now)) as Array<{ now_ms: string }>;
    const nowMs = Number(now!.now_ms);
    const choice = chooseRegionClaim(raw ? toRow(raw) : null, request.region, nowMs);
    if (choice.kind === 'held') return { held: choice.row };
    const row = claimedRow(choice, request, nowMs);
    const values = [row.region, row.epoch.toString(), row.expiresAt, row.horizon, row.floor];
    if (choice.kind === 'insert') {
      await runner.query(this.statements.insert, [request.name, row.dataCenterId, ...values]);
    } else {
      await runner.query(this.statements.write, [...values, request.name, row.dataCenterId]);
    }
    return claimedResult(choice, request, row);
  }
}
