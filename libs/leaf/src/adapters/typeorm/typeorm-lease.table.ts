import type { DataSource } from 'typeorm';
import { LeafConfigurationError } from '../../core/errors/leaf-configuration.error';
import {
  changesOneRow,
  dialectOf,
  type ConnectionSql,
  type LockingTransactions,
  type SqlDialect,
} from './sql-dialect';
import { LEASE_NOW_MS } from './worker-lease.sql';

/** How many times a claim that lost a race (a duplicate key, a lock wait) runs again. */
const CLAIM_ATTEMPTS = 5;

/**
 * Longest silence of a claiming session inside its transaction, in seconds: a claimer that
 * froze there (paused, cut off) would block the renewals of every row it locked; the server
 * ends its session after this long (a claim is a few statements, no call outside the database).
 */
const CLAIM_IDLE_SEC = 3;

/**
 * What the lease tables `leaf_worker_lease` and `leaf_region_lease` share on MySQL/MariaDB or
 * PostgreSQL: a claim is one READ COMMITTED row-locking transaction, run again while it loses
 * a race to another claim, that reads the lease clock once its locks are held; a renewal or
 * release is one conditional `UPDATE`, so a deposed holder changes nothing.
 */
export abstract class TypeormLeaseTable {
  /** Where the table lives, for logs and errors (`PostgreSQL leaf_worker_lease`). */
  readonly description: string;
  protected readonly dialect: SqlDialect;
  private readonly transaction: LockingTransactions;
  private readonly now: string;

  /**
   * @param refusal the configuration error's text for the driver named.
   * @param lockWaitTimeoutSec how long a claim waits for its row locks (default 5).
   * @throws {LeafConfigurationError} for a driver other than mysql, mariadb or postgres, or a
   *   wait the database does not take.
   */
  protected constructor(
    protected readonly dataSource: DataSource,
    table: string,
    refusal: (driver: string) => string,
    lockWaitTimeoutSec?: number,
  ) {
    const dialect = dialectOf(dataSource);
    if (!dialect?.coordination)
      throw new LeafConfigurationError([refusal(String(dataSource.options.type))]);
    this.dialect = dialect;
    this.description = `${dialect.name} ${table}`;
    const limits = { lockWaitTimeoutSec: lockWaitTimeoutSec ?? 5, idleTimeoutSec: CLAIM_IDLE_SEC };
    this.transaction = dialect.lockingTransactions(dataSource, limits, new.target.name);
    const nowMs = LEASE_NOW_MS[dialect.kind] ?? dialect.nowMs;
    this.now = dialect.sql(`SELECT CAST(${nowMs} AS CHAR) AS now_ms`);
  }

  /** Runs `claim` in a transaction of its own, again while it loses a race. */
  protected async claiming<T>(claim: (runner: ConnectionSql) => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.transaction(claim);
      } catch (error) {
        const race = this.dialect.isDuplicate(error) || this.dialect.isLockError(error);
        if (!race || attempt >= CLAIM_ATTEMPTS) throw error;
      }
    }
  }

  /**
   * The lease clock's now (ms), read on a claim's `runner` once its locks are held: a read
   * before the wait would be stale.
   */
  protected async lockedNow(runner: ConnectionSql): Promise<number> {
    const [now] = (await runner.query(this.now)) as Array<{ now_ms: string }>;
    return Number(now!.now_ms);
  }

  /**
   * Runs the conditional `UPDATE` `sql`; true when the row is still the lease's. No row
   * affected is checked by `stillHeld` reading the row: a MySQL connection without
   * `FOUND_ROWS` counts only rows changed, and an update that changed nothing (twice in one
   * database millisecond) must not pass for a lost lease.
   */
  protected async fenced(
    sql: string,
    parameters: unknown[],
    stillHeld: () => Promise<boolean>,
  ): Promise<boolean> {
    return (await changesOneRow(this.dataSource, sql, parameters)) || stillHeld();
  }
}
