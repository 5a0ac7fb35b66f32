import type { DataSource } from 'typeorm';
import { AllocationError } from '../../core/errors/allocation.error';
import { LeafConfigurationError } from '../../core/errors/leaf-configuration.error';
import { LeafError, messageOf } from '../../core/errors/leaf.error';
import {
  NumberFormatExistsError,
  NumberFormatNotFoundError,
} from '../../core/errors/number-format.error';
import {
  widthShrinkError,
  type NumberDatePattern,
  type NumberFormat,
  type NumberMode,
  type NumberReset,
} from '../../core/numbers/number-format';
import type { NumberFormatStore } from '../../core/numbers/number-format-store.port';
import { changesOneRow, dialectOf, type SqlDialect } from './sql-dialect';

interface RawFormat {
  biz_tag: string;
  leaf_mode: string;
  prefix: string;
  number_separator: string;
  date_pattern: string | null;
  time_zone: string;
  counter_width: number | string;
  reset_period: string;
  description: string | null;
}

const COLUMNS =
  'biz_tag, leaf_mode, prefix, number_separator, date_pattern, time_zone, counter_width, reset_period, description';

/**
 * `leaf_number_format` (migration `CreateLeafNumberFormat1700000000005`) and the database's
 * clock through TypeORM, on MySQL/MariaDB, PostgreSQL and SQLite: one autocommit statement per
 * call. The clock is read as the database-held coordination reads it (`SqlDialect.nowMs`:
 * `UTC_TIMESTAMP(6)` on MySQL/MariaDB, whatever the session's time zone; `clock_timestamp()` on
 * PostgreSQL; the host's on SQLite, which serves one process).
 */
export class TypeormNumberFormatStore implements NumberFormatStore {
  private readonly dialect: SqlDialect;

  /** @throws {LeafConfigurationError} for a driver other than mysql, mariadb, postgres or better-sqlite3. */
  constructor(private readonly dataSource: DataSource) {
    const dialect = dialectOf(dataSource);
    if (!dialect) {
      throw new LeafConfigurationError([
        `business numbers: unsupported driver "${dataSource.options.type}" (use mysql, mariadb, postgres or better-sqlite3)`,
      ]);
    }
    this.dialect = dialect;
  }

  async listFormats(): Promise<NumberFormat[]> {
    const rows = await this.run<RawFormat[]>(
      '*',
      `SELECT ${COLUMNS} FROM leaf_number_format ORDER BY biz_tag`,
    );
    return rows.map(toFormat);
  }

  async findFormat(tag: string): Promise<NumberFormat | null> {
    const [row] = await this.run<RawFormat[]>(
      tag,
      `SELECT ${COLUMNS} FROM leaf_number_format WHERE biz_tag = ?`,
      [tag],
    );
    return row ? toFormat(row) : null;
  }

  async createFormat(format: NumberFormat): Promise<NumberFormat> {
    // A duplicate inserts nothing (0 rows) and the row already there is left alone. The
    // values are checked to fit their columns, so IGNORE hides nothing else.
    const { tag, mode, prefix, separator, datePattern, timeZone, width, reset, description } =
      format;
    const created = await this.run<boolean>(
      tag,
      this.dialect.insertIgnoring(
        `INTO leaf_number_format (${COLUMNS}, update_time) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, CURRENT_TIMESTAMP)`,
        'biz_tag',
      ),
      [tag, mode, prefix, separator, datePattern, timeZone, width, reset, description],
      true,
    );
    if (!created) throw new NumberFormatExistsError(tag);
    return format;
  }

  async updateFormat(
    tag: string,
    width: number,
    description: string | null,
  ): Promise<NumberFormat> {
    // The width only grows, whoever else writes: the guard is in the statement.
    await this.run(
      tag,
      'UPDATE leaf_number_format SET counter_width = ?, description = ?, update_time = CURRENT_TIMESTAMP WHERE biz_tag = ? AND counter_width <= ?',
      [width, description, tag, width],
      true,
    );
    const format = await this.findFormat(tag);
    if (format === null) throw new NumberFormatNotFoundError(tag);
    if (format.width !== width) throw widthShrinkError(format.width);
    return format;
  }

  async databaseNow(): Promise<number> {
    const [row] = await this.run<Array<{ now_ms: string | number }>>(
      '*',
      `SELECT CAST(${this.dialect.nowMs} AS CHAR) AS now_ms`,
    );
    const ms = Number(row?.now_ms);
    if (!Number.isSafeInteger(ms)) {
      throw new AllocationError('*', `the database's clock answered "${String(row?.now_ms)}"`);
    }
    return ms;
  }

  /** One statement in autocommit: its rows, or (`changed`) whether it changed one row. */
  private async run<T>(
    tag: string,
    text: string,
    parameters: unknown[] = [],
    changed = false,
  ): Promise<T> {
    const sql = this.dialect.sql(text);
    try {
      return (await (changed
        ? changesOneRow(this.dataSource, sql, parameters)
        : this.dataSource.query(sql, parameters))) as T;
    } catch (error) {
      if (error instanceof LeafError) throw error;
      const reason = messageOf(error);
      throw new AllocationError(tag, `leaf_number_format: ${reason}`, { cause: error });
    }
  }
}

function toFormat(row: RawFormat): NumberFormat {
  return {
    tag: row.biz_tag,
    mode: row.leaf_mode as NumberMode,
    prefix: row.prefix,
    separator: row.number_separator,
    datePattern: (row.date_pattern ?? null) as NumberDatePattern | null,
    timeZone: row.time_zone,
    width: Number(row.counter_width),
    reset: row.reset_period as NumberReset,
    description: row.description,
  };
}
