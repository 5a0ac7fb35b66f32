import type { DataSource } from 'typeorm';
import { HighWaterUnavailableError } from '../../core/errors/allocation.error';
import { LeafConfigurationError } from '../../core/errors/leaf-configuration.error';
import { LEAF_DEFAULTS } from '../../core/leaf-defaults';
import type { HighWaterMark, HighWaterStore } from '../../core/segment/high-water';
import { withTimeout } from '../../core/with-timeout';
import { dataSourceLabel } from './data-source-label';
import { changesOneRow, dialectOf, type SqlDialect } from './sql-dialect';
import { messageOf } from '../../core/errors/leaf.error';

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
  private readonly dialect: SqlDialect;
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
    const dialect = dialectOf(dataSource);
    if (!dialect?.coordination) {
      throw new LeafConfigurationError([
        `segment.highWater.dataSource: unsupported driver "${dataSource.options.type}" (use mysql, mariadb or postgres)`,
      ]);
    }
    this.dialect = dialect;
    this.callTimeoutMs = options.callTimeoutMs ?? LEAF_DEFAULTS.segment.highWater.callTimeoutMs;
  }

  readonly kind = 'database';

  /** False while the DataSource is not initialised or the last call could not reach it. */
  get available(): boolean {
    return this.dataSource.isInitialized && !this.lastCallFailed;
  }

  /** `host:port/database` of the marks' database, as logs and readiness name it. */
  describe(): string {
    return dataSourceLabel(this.dataSource);
  }

  async read(tag: string): Promise<HighWaterMark | null> {
    const sql = this.dialect.sql(
      'SELECT CAST(mark AS CHAR) AS mark, CAST(version AS CHAR) AS version FROM leaf_high_water WHERE leaf_name = ? AND hw_key = ?',
    );
    type Row = { mark: string; version: string };
    const [row] = await this.call<Row[]>(tag, () => this.dataSource.query(sql, [this.name, tag]));
    return row === undefined ? null : { value: BigInt(row.mark), version: Number(row.version) };
  }

  async write(tag: string, value: bigint, expected: HighWaterMark | null): Promise<boolean> {
    const mark = value.toString();
    if (expected === null) {
      const sql = this.dialect.sql(
        'INSERT INTO leaf_high_water (leaf_name, hw_key, mark, version) VALUES (?, ?, ?, 1)',
      );
      return this.call(tag, async () => {
        try {
          await this.dataSource.query(sql, [this.name, tag, mark]);
          return true;
        } catch (error) {
          if (this.dialect.isDuplicate(error)) return false;
          throw error;
        }
      });
    }
    const sql = this.dialect.sql(
      'UPDATE leaf_high_water SET mark = ?, version = version + 1, updated_at = CURRENT_TIMESTAMP(3) WHERE leaf_name = ? AND hw_key = ? AND version = ?',
    );
    return this.call(tag, () =>
      changesOneRow(this.dataSource, sql, [mark, this.name, tag, expected.version]),
    );
  }

  private async call<T>(tag: string, operation: () => Promise<T>): Promise<T> {
    if (!this.dataSource.isInitialized) {
      this.lastCallFailed = true;
      throw new HighWaterUnavailableError(
        tag,
        `the high-water database (${this.describe()}) is not connected`,
      );
    }
    const work = operation();
    const outcome = await withTimeout(work, this.callTimeoutMs).catch((error: unknown) => {
      this.lastCallFailed = true;
      const reason = messageOf(error);
      throw new HighWaterUnavailableError(tag, `the high-water database: ${reason}`, {
        cause: error,
      });
    });
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
