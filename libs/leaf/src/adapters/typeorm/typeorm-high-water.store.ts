import type { DataSource, QueryRunner } from 'typeorm';
import { HighWaterUnavailableError } from '../../core/errors/allocation.error';
import { LeafConfigurationError } from '../../core/errors/leaf-configuration.error';
import { LEAF_DEFAULTS } from '../../core/leaf-defaults';
import type { HighWaterMark, HighWaterStore } from '../../core/segment/high-water';
import { withTimeout } from '../../core/with-timeout';
import { dataSourceLabel } from './data-source-label';

/** Duplicate key: MySQL/MariaDB's ER_DUP_ENTRY, PostgreSQL's unique_violation. */
const DUPLICATE = new Set(['ER_DUP_ENTRY', '23505']);

/** Options of {@link TypeormHighWaterStore}. */
export interface TypeormHighWaterStoreOptions {
  /**
   * Most time one read or write may take (it runs while the tag's row is locked in the
   * allocation database); validated by the module's options.
   * @default 2000
   */
  callTimeoutMs?: number;
}

/**
 * {@link HighWaterStore} on a MySQL/MariaDB or PostgreSQL database of its own (docs/design.md,
 * "High-water mark"): table `leaf_high_water` (`LEAF_HIGH_WATER_MIGRATIONS`), one row per
 * deployment `name` and key. The compare-and-set is one statement, `UPDATE … SET mark = ?,
 * version = version + 1 WHERE … AND version = ?`; a first mark is an `INSERT` that loses to a
 * duplicate key. Marks travel as decimal strings, never as JavaScript numbers. Each statement
 * commits on its own, before the allocation's COMMIT.
 *
 * Any failure but a lost compare-and-set is {@link HighWaterUnavailableError}, and every call
 * is bounded by `callTimeoutMs` (a write that timed out may still be applied, which is safe:
 * a mark above `max_id` only makes the next range start higher).
 */
export class TypeormHighWaterStore implements HighWaterStore {
  private readonly postgres: boolean;
  private readonly callTimeoutMs: number;
  private lastCallFailed = false;

  /**
   * @param dataSource the marks' database, initialised by its owner; never the allocation
   *   database.
   * @param name the deployment's name (`LeafModuleOptions.name`): marks of other names are
   *   never read.
   * @throws {LeafConfigurationError} for a driver other than mysql, mariadb or postgres.
   */
  constructor(
    private readonly dataSource: DataSource,
    private readonly name: string,
    options: TypeormHighWaterStoreOptions = {},
  ) {
    const type = dataSource.options.type;
    if (!['mysql', 'mariadb', 'postgres'].includes(type)) {
      throw new LeafConfigurationError([
        `segment.highWater.dataSource: unsupported driver "${type}" (use mysql, mariadb or postgres)`,
      ]);
    }
    this.postgres = type === 'postgres';
    this.callTimeoutMs = options.callTimeoutMs ?? LEAF_DEFAULTS.segment.highWater.callTimeoutMs;
  }

  /** False while the DataSource is not initialised or the last call could not reach it. */
  get available(): boolean {
    return this.dataSource.isInitialized && !this.lastCallFailed;
  }

  /** `host:port/database` of the marks' database, as logs and readiness name it. */
  describe(): string {
    return dataSourceLabel(this.dataSource);
  }

  async read(tag: string): Promise<HighWaterMark | null> {
    const sql = this.postgres
      ? 'SELECT mark::text AS mark, version::text AS version FROM leaf_high_water WHERE leaf_name = $1 AND hw_key = $2'
      : 'SELECT CAST(mark AS CHAR) AS mark, CAST(version AS CHAR) AS version FROM leaf_high_water WHERE leaf_name = ? AND hw_key = ?';
    const rows = (await this.call(tag, (runner) => runner.query(sql, [this.name, tag]))) as Array<{
      mark: string;
      version: string;
    }>;
    const row = rows[0];
    if (row === undefined) return null;
    return { value: BigInt(row.mark), version: Number(row.version) };
  }

  async write(tag: string, value: bigint, expected: HighWaterMark | null): Promise<boolean> {
    const mark = value.toString();
    if (expected === null) {
      const sql = this.postgres
        ? 'INSERT INTO leaf_high_water (leaf_name, hw_key, mark, version) VALUES ($1, $2, $3, 1)'
        : 'INSERT INTO leaf_high_water (leaf_name, hw_key, mark, version) VALUES (?, ?, ?, 1)';
      return this.call(tag, async (runner) => {
        try {
          await runner.query(sql, [this.name, tag, mark]);
          return true;
        } catch (error) {
          if (DUPLICATE.has(driverCode(error))) return false;
          throw error;
        }
      });
    }
    const sql = this.postgres
      ? 'UPDATE leaf_high_water SET mark = $1, version = version + 1, updated_at = CURRENT_TIMESTAMP WHERE leaf_name = $2 AND hw_key = $3 AND version = $4'
      : 'UPDATE leaf_high_water SET mark = ?, version = version + 1, updated_at = CURRENT_TIMESTAMP(3) WHERE leaf_name = ? AND hw_key = ? AND version = ?';
    const result = await this.call(tag, (runner) =>
      runner.query(sql, [mark, this.name, tag, expected.version], true),
    );
    return (result as { affected?: number }).affected === 1;
  }

  private async call<T>(tag: string, operation: (runner: QueryRunner) => Promise<T>): Promise<T> {
    if (!this.dataSource.isInitialized) {
      this.lastCallFailed = true;
      throw new HighWaterUnavailableError(
        tag,
        `the high-water database (${this.describe()}) is not connected`,
      );
    }
    const work = (async () => {
      const runner = this.dataSource.createQueryRunner();
      try {
        return await operation(runner);
      } finally {
        await runner.release();
      }
    })();
    let outcome: Awaited<ReturnType<typeof withTimeout<T>>>;
    try {
      outcome = await withTimeout(work, this.callTimeoutMs);
    } catch (error) {
      this.lastCallFailed = true;
      const reason = error instanceof Error ? error.message : String(error);
      throw new HighWaterUnavailableError(tag, `the high-water database: ${reason}`, {
        cause: error,
      });
    }
    if (!outcome.ok) {
      // Still running: its answer (or failure) is dropped once it comes.
      work.catch(() => undefined);
      this.lastCallFailed = true;
      throw new HighWaterUnavailableError(
        tag,
        `the high-water database did not answer within ${this.callTimeoutMs} ms`,
      );
    }
    this.lastCallFailed = false;
    return outcome.value;
  }
}

/** The driver's error code (mysql2's `code`, pg's SQLSTATE), through TypeORM's wrapper. */
function driverCode(error: unknown): string {
  const e = error as { code?: unknown; driverError?: { code?: unknown } };
  const code = e?.driverError?.code ?? e?.code;
  return typeof code === 'string' ? code : '';
}
