import type { DataSource, QueryRunner } from 'typeorm';
import { AllocationError } from '../../core/errors/allocation.error';
import { GaplessBusyError, GaplessSeriesExistsError } from '../../core/errors/gapless.error';
import { LeafConfigurationError } from '../../core/errors/leaf-configuration.error';
import { LeafError, messageOf } from '../../core/errors/leaf.error';
import { GAPLESS_GENESIS_HASH } from '../../core/gapless/gapless-chain';
import type { GaplessSeries } from '../../core/gapless/gapless-series';
import type {
  GaplessLock,
  GaplessSnapshot,
  GaplessStore,
} from '../../core/gapless/gapless-store.port';
import {
  NUMBER_COLUMNS,
  RECORD_COLUMNS,
  SERIES_COLUMNS,
  openGaplessLock,
  type WriteKeepingLock,
  toNumberRow,
  toRecord,
  toSeries,
} from './gapless.sql';
import { dialectOf, type SqlDialect } from './sql-dialect';

type Row = Record<string, unknown>;

/**
 * The gapless tables (migration `CreateLeafGapless1700000000007`) through a TypeORM
 * DataSource on MySQL/MariaDB or PostgreSQL. Each {@link withLock} is one READ COMMITTED
 * transaction on one pooled connection that locks the series' row first, with the wait
 * bounded by `lockWaitMs` (and its idleness by `idleMs` on PostgreSQL); the statements are
 * `gapless.sql.ts`'s.
 */
export class TypeormGaplessStore implements GaplessStore {
  readonly dialect: SqlDialect;

  /** @throws {LeafConfigurationError} for a driver other than mysql, mariadb or postgres. */
  constructor(
    private readonly dataSource: DataSource,
    private readonly lockWaitMs: number,
    private readonly idleMs = 0,
  ) {
    const dialect = dialectOf(dataSource);
    if (!dialect?.boundLockWait)
      throw new LeafConfigurationError([
        `gapless: unsupported driver "${dataSource.options.type}" (use mysql, mariadb or postgres: a series needs row locks and a shared clock)`,
      ]);
    this.dialect = dialect;
  }

  async createSeries(series: Omit<GaplessSeries, 'createdAt'>): Promise<GaplessSeries> {
    const { name, prefix, width, period, timeZone, externalCode, correctionsOf } = series;
    const created = await this.inTransaction(name, 'READ COMMITTED', async (runner) => {
      const result = (await runner.query(
        this.dialect.sql(
          this.dialect.insertIgnoring(
            `INTO leaf_gapless_series (name, prefix, width, period, time_zone, external_code, corrections_of, created_at, last_seq, last_hash) VALUES (?, ?, ?, ?, ?, ?, ?, ${this.dialect.nowMs}, 0, ?)`,
            'name',
          ),
        ),
        [name, prefix, width, period, timeZone, externalCode, correctionsOf, GAPLESS_GENESIS_HASH],
        true,
      )) as { affected?: number };
      return result.affected === 1;
    });
    if (!created) throw new GaplessSeriesExistsError(name);
    return (await this.findSeries(name))!;
  }

  async listSeries(): Promise<GaplessSeries[]> {
    const rows = await this.read(
      '*',
      `SELECT ${SERIES_COLUMNS} FROM leaf_gapless_series ORDER BY name`,
    );
    return rows.map(toSeries);
  }

  async findSeries(name: string): Promise<GaplessSeries | null> {
    const [row] = await this.read(
      name,
      `SELECT ${SERIES_COLUMNS} FROM leaf_gapless_series WHERE name = ?`,
      [name],
    );
    return row ? toSeries(row) : null;
  }

  withLock<T>(series: string, work: (lock: GaplessLock) => Promise<T>): Promise<T> {
    const begunBy = this.dialect.boundedTransaction;
    let lock: WriteKeepingLock | undefined;
    return this.inTransaction(
      series,
      'READ COMMITTED',
      async (runner) => {
        lock = await openGaplessLock(runner, this.dialect, series, {
          waitMs: this.lockWaitMs,
          idleMs: this.idleMs,
          lockingReads: false,
          begunBy,
        });
        return work(lock);
      },
      begunBy?.begin(this.lockWaitMs, this.idleMs) ?? null,
      () => lock?.kept ?? null,
    );
  }

  async hasExpired(series: string): Promise<boolean> {
    const rows = await this.read(
      series,
      `SELECT 1 AS expired FROM leaf_gapless_number WHERE series = ? AND state = 'reserved' AND expires_at <= ${this.dialect.nowMs} LIMIT 1`,
      [series],
    );
    return rows.length > 0;
  }

  snapshot<T>(work: (view: GaplessSnapshot) => Promise<T>): Promise<T> {
    return this.inTransaction('*', 'REPEATABLE READ', (runner) => {
      const read = async (sql: string, parameters: unknown[]) =>
        (await runner.query(this.dialect.sql(sql), parameters)) as Row[];
      return work({
        async readNumbers(series, after, limit) {
          const from = after ? ' AND (period_key > ? OR (period_key = ? AND number > ?))' : '';
          const rows = await read(
            `SELECT ${NUMBER_COLUMNS} FROM leaf_gapless_number WHERE series = ?${from} ORDER BY leaf_gapless_number.period_key, leaf_gapless_number.number LIMIT ${Math.trunc(limit)}`,
            after ? [series, after.periodKey, after.periodKey, after.number] : [series],
          );
          return rows.map(toNumberRow);
        },
        async readRecords(series, afterSeq, limit) {
          const rows = await read(
            `SELECT ${RECORD_COLUMNS} FROM leaf_gapless_record WHERE series = ? AND seq > ? ORDER BY leaf_gapless_record.seq LIMIT ${Math.trunc(limit)}`,
            [series, afterSeq],
          );
          return rows.map(toRecord);
        },
        async readCounters(series) {
          const rows = await read(
            'SELECT period_key, CAST(last_number AS CHAR) AS last_number FROM leaf_gapless_counter WHERE series = ? ORDER BY period_key',
            [series],
          );
          return rows.map((row) => ({
            periodKey: String(row.period_key),
            last: BigInt(String(row.last_number)),
          }));
        },
      });
    });
  }

  private async read(series: string, text: string, parameters: unknown[] = []): Promise<Row[]> {
    try {
      return (await this.dataSource.query(this.dialect.sql(text), parameters)) as Row[];
    } catch (error) {
      throw failed(series, error, this.lockWaitMs, this.dialect);
    }
  }

  /**
   * `work` in one transaction on one connection: committed when it resolves, else rolled
   * back. With `begin`, the transaction is started by it and ended by a simple query that
   * runs the `kept` write first (`GaplessLockMode.begunBy`).
   */
  private async inTransaction<T>(
    series: string,
    isolation: 'READ COMMITTED' | 'REPEATABLE READ',
    work: (runner: QueryRunner) => Promise<T>,
    begin: string | null = null,
    kept: () => string | null = () => null,
  ): Promise<T> {
    const runner = this.dataSource.createQueryRunner();
    // Started by `begin` (one round trip, bounds included) or by TypeORM (two on PostgreSQL).
    let open = false;
    try {
      if (begin === null) await runner.startTransaction(isolation);
      else {
        open = true;
        await runner.query(begin);
      }
      const result = await work(runner);
      const write = kept();
      if (begin === null) await runner.commitTransaction();
      else await runner.query(write === null ? 'COMMIT' : `${write}; COMMIT`);
      open = false;
      return result;
    } catch (error) {
      if (runner.isTransactionActive) await runner.rollbackTransaction().catch(() => undefined);
      if (open) await runner.query('ROLLBACK').catch(() => undefined);
      throw failed(series, error, this.lockWaitMs, this.dialect);
    } finally {
      await runner.release();
    }
  }
}

function failed(series: string, error: unknown, waitMs: number, dialect: SqlDialect): LeafError {
  if (error instanceof LeafError) return error;
  if (dialect.isLockError(error)) return new GaplessBusyError(series, waitMs, { cause: error });
  const reason = messageOf(error);
  return new AllocationError(series, `gapless series "${series}": ${reason}`, { cause: error });
}
