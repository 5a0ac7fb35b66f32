import type { DataSource } from 'typeorm';
import {
  chooseWorkerLease,
  claimedWorkerLease,
  type HeldWorkerLease,
  type WorkerLeaseClaimRequest,
  type WorkerLeaseClaimResult,
  type WorkerLeaseJournalRow,
  type WorkerLeaseRow,
  type WorkerLeaseStore,
} from '../../core/snowflake/worker-lease-store.port';
import { TypeormLeaseTable } from './typeorm-lease.table';
import { workerLeaseStatements } from './worker-lease.sql';

/** Settings of {@link TypeormWorkerLeaseStore}. */
export interface TypeormWorkerLeaseStoreOptions {
  /**
   * How long the claim waits for the namespace's row locks, in seconds.
   * @default 5
   */
  lockWaitTimeoutSec?: number;
}

interface RawRow {
  worker_id: number | string;
  holder: string;
  run: string;
  epoch: string;
  expires_at: string;
  horizon: string;
}

function toRow(raw: RawRow): WorkerLeaseRow {
  return {
    workerId: Number(raw.worker_id),
    holder: raw.holder,
    run: raw.run,
    epoch: BigInt(raw.epoch),
    expiresAt: Number(raw.expires_at),
    horizon: Number(raw.horizon),
  };
}

/**
 * The snowflake worker-ID lease table `leaf_worker_lease` on MySQL/MariaDB or PostgreSQL
 * (docs/design.md, "The database variant"). The claim locks every row of the namespace
 * (`SELECT … FOR UPDATE`; on PostgreSQL after a transaction-scoped advisory lock on the
 * namespace), reads the database's clock, applies {@link chooseWorkerLease} and updates or
 * inserts one row; two claims racing for a new row make one fail on the primary key, and it
 * runs again. Renewal and release are conditional on run and epoch ({@link TypeormLeaseTable}).
 */
export class TypeormWorkerLeaseStore extends TypeormLeaseTable implements WorkerLeaseStore {
  private readonly statements = workerLeaseStatements(this.dialect);

  /** @throws {LeafConfigurationError} for a driver other than mysql, mariadb or postgres. */
  constructor(dataSource: DataSource, options: TypeormWorkerLeaseStoreOptions = {}) {
    super(
      dataSource,
      'leaf_worker_lease',
      (driver) =>
        `snowflake.database: worker IDs are leased from MySQL/MariaDB or PostgreSQL (got driver "${driver}"); SQLite serves one process: use an explicit snowflake.workerId`,
      options.lockWaitTimeoutSec,
    );
  }

  claim(request: WorkerLeaseClaimRequest): Promise<WorkerLeaseClaimResult> {
    return this.claiming(async (runner) => {
      // Where row locks take no gaps (PostgreSQL), claims of one namespace queue on a lock of its
      // name instead, so no two race to insert one new row (MySQL's next-key locks do this).
      if (this.dialect.nameLock) {
        await runner.query(this.dialect.nameLock, [`leaf_worker_lease:${request.name}`]);
      }
      const rows = ((await runner.query(this.statements.lock, [request.name])) as RawRow[]).map(
        toRow,
      );
      const nowMs = await this.lockedNow(runner);
      const choice = chooseWorkerLease(rows, request.holder, nowMs, request.maxWorkerId);
      if (choice.kind === 'full') return { full: true, retryInMs: choice.retryInMs };
      const claimed = claimedWorkerLease(choice, request);
      const { name, holder, run, leaseMs } = request;
      if (choice.kind === 'insert') {
        await runner.query(this.statements.insert, [name, claimed.workerId, holder, run, leaseMs]);
      } else {
        await runner.query(this.statements.take, [holder, run, leaseMs, name, claimed.workerId]);
      }
      // In the claim's transaction: the journal has a row exactly for every claim that commits.
      if (request.journal) {
        await runner.query(this.statements.journal, [
          name,
          claimed.workerId,
          claimed.epoch.toString(),
          holder,
          run,
          request.journal.instance.slice(0, 255),
          nowMs,
          claimed.previous?.horizon ?? null,
        ]);
      }
      return { claimed };
    });
  }

  renew(lease: HeldWorkerLease, leaseMs: number, horizon: number): Promise<boolean> {
    return this.update(lease, this.statements.renew, [leaseMs, horizon]);
  }

  release(lease: HeldWorkerLease, horizon: number): Promise<boolean> {
    return this.update(lease, this.statements.release, [horizon]);
  }

  async list(name: string): Promise<WorkerLeaseRow[]> {
    const rows = (await this.dataSource.query(this.statements.list, [name])) as RawRow[];
    return rows.map(toRow);
  }

  async claimsOf(name: string, workerId: number): Promise<WorkerLeaseJournalRow[]> {
    const rows = (await this.dataSource.query(this.statements.claims, [name, workerId])) as Array<{
      worker_id: number | string;
      epoch: string;
      holder: string;
      run: string;
      instance: string;
      claimed_at: string;
      after_ms: string | null;
    }>;
    return rows.map((raw) => ({
      workerId: Number(raw.worker_id),
      epoch: BigInt(raw.epoch),
      holder: raw.holder,
      run: raw.run,
      instance: raw.instance,
      claimedAt: Number(raw.claimed_at),
      afterMs: raw.after_ms === null ? null : Number(raw.after_ms),
    }));
  }

  /** A conditional `UPDATE` of `lease`'s row (`values`, then the lease's key, run and epoch). */
  private update(lease: HeldWorkerLease, sql: string, values: unknown[]): Promise<boolean> {
    const held = [lease.name, lease.workerId, lease.run, lease.epoch.toString()];
    return this.fenced(sql, [...values, ...held], async () => {
      const [raw] = (await this.dataSource.query(this.statements.one, [
        lease.name,
        lease.workerId,
      ])) as RawRow[];
      return raw !== undefined && raw.run === lease.run && BigInt(raw.epoch) === lease.epoch;
    });
  }
}

/**
 * The lease store for a TypeORM `DataSource` (MySQL/MariaDB or PostgreSQL).
 * @throws {LeafConfigurationError} for another driver.
 */
export function createWorkerLeaseStore(
  dataSource: DataSource,
  options: TypeormWorkerLeaseStoreOptions = {},
): WorkerLeaseStore {
  return new TypeormWorkerLeaseStore(dataSource, options);
}
