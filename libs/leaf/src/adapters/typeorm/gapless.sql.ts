/**
 * The statements of gapless series (docs/design.md, "Gapless numbers") on MySQL/MariaDB and
 * PostgreSQL, over any {@link GaplessSqlExecutor}: the store's own transactions (service
 * mode) and a caller's (in-transaction mode) run the same ones. Written with `?` and
 * MySQL's `CAST(… AS CHAR)`, translated for PostgreSQL (`toPostgresSql`).
 */
import { GaplessBusyError, GaplessSeriesNotFoundError } from '../../core/errors/gapless.error';
import { applyGaplessBatch, type GaplessNumber } from '../../core/gapless/gapless-batch';
import type { GaplessPeriod, GaplessSeries } from '../../core/gapless/gapless-series';
import type {
  GaplessChanges,
  GaplessCounter,
  GaplessLock,
  GaplessNumberRow,
  GaplessReads,
  GaplessRecord,
  GaplessSqlExecutor,
  GaplessState,
} from '../../core/gapless/gapless-store.port';
import type { SqlDialect } from './sql-dialect';

export const SERIES_COLUMNS =
  'name, prefix, width, period, time_zone, external_code, corrections_of, CAST(created_at AS CHAR) AS created_at';
export const NUMBER_COLUMNS =
  'period_key, CAST(number AS CHAR) AS number, idem_key, state, reason, CAST(reserved_at AS CHAR) AS reserved_at, CAST(expires_at AS CHAR) AS expires_at, CAST(settled_at AS CHAR) AS settled_at';
export const RECORD_COLUMNS =
  'CAST(seq AS CHAR) AS seq, period_key, CAST(number AS CHAR) AS number, action, reason, idem_key, CAST(at AS CHAR) AS at, prev_hash, hash';

type Row = Record<string, unknown>;
/** A statement in MySQL's form and its values. */
type Statement = [sql: string, values: unknown[]];

const text = (value: unknown): string | null => (value === null ? null : String(value));
const ms = (value: unknown): number | null => (value === null ? null : Number(value));

export function toSeries(row: Row): GaplessSeries {
  return {
    name: String(row.name),
    prefix: String(row.prefix),
    width: Number(row.width),
    period: row.period as GaplessPeriod,
    timeZone: String(row.time_zone),
    externalCode: text(row.external_code),
    correctionsOf: text(row.corrections_of),
    createdAt: Number(row.created_at),
  };
}

export function toNumberRow(row: Row): GaplessNumberRow {
  return {
    periodKey: String(row.period_key),
    number: BigInt(String(row.number)),
    key: text(row.idem_key),
    state: row.state as GaplessState,
    reason: text(row.reason),
    reservedAt: Number(row.reserved_at),
    expiresAt: ms(row.expires_at),
    settledAt: ms(row.settled_at),
  };
}

export function toRecord(row: Row): GaplessRecord {
  return {
    seq: BigInt(String(row.seq)),
    periodKey: String(row.period_key),
    number: BigInt(String(row.number)),
    action: row.action as GaplessRecord['action'],
    reason: text(row.reason),
    key: text(row.idem_key),
    at: Number(row.at),
    prevHash: String(row.prev_hash),
    hash: String(row.hash),
  };
}

/** `(?, ?, …)` of `columns` placeholders, `rows` times, comma-separated. */
function tuples(rows: number, columns: number): string {
  const tuple = `(${Array.from({ length: columns }, () => '?').join(', ')})`;
  return Array.from({ length: rows }, () => tuple).join(', ');
}

/** How {@link openGaplessLock} waits and reads. */
export interface GaplessLockMode {
  /** Longest wait for the series' row lock, ms (PostgreSQL: to the ms; MySQL/MariaDB: whole seconds, rounded up). */
  readonly waitMs: number;
  /**
   * Read with `FOR UPDATE`: in a caller's transaction, whose isolation level is its own, a
   * locking read is what sees the latest committed rows (InnoDB's REPEATABLE READ reads its
   * snapshot otherwise). The store's own READ COMMITTED transactions read plainly.
   */
  readonly lockingReads: boolean;
  /**
   * PostgreSQL: the longest the transaction may then sit idle before the server ends its
   * session, releasing the lock (`idle_in_transaction_session_timeout`, for the transaction;
   * 0: the session's own). Not bounded on MySQL/MariaDB (docs/design.md, "Gapless numbers").
   */
  readonly idleMs: number;
  /**
   * The store's own transaction, begun by this (`SqlDialect.boundedTransaction`): it bounds
   * its lock waits already, and the batch's write is kept, not run, for the store to send
   * with its `COMMIT` in one simple query — one round trip, the client not woken in between
   * ({@link WriteKeepingLock.kept}).
   */
  readonly begunBy?: SqlDialect['boundedTransaction'];
}

/** A lock whose batch write may wait for the commit ({@link GaplessLockMode.begunBy}). */
export interface WriteKeepingLock extends GaplessLock {
  /** The write kept for the `COMMIT` (values inlined), or null. */
  readonly kept: string | null;
}

/**
 * Takes the series' lock — its `leaf_gapless_series` row, the first and only row locked
 * before the numbers are decided — with a bounded wait, and reads the chain head and the
 * database's clock in the same statement.
 * @throws {GaplessSeriesNotFoundError} for an unknown series.
 * @throws {GaplessBusyError} when the lock was not free within `mode.waitMs`.
 */
export async function openGaplessLock(
  db: GaplessSqlExecutor,
  dialect: SqlDialect,
  name: string,
  mode: GaplessLockMode,
): Promise<WriteKeepingLock> {
  const run = async (sql: string, parameters: unknown[] = []) =>
    (await db.query(dialect.sql(sql), parameters)) as Row[];
  const lockSql = `SELECT ${SERIES_COLUMNS}, CAST(last_seq AS CHAR) AS last_seq, last_hash, CAST(${dialect.nowMs} AS CHAR) AS now_ms FROM leaf_gapless_series WHERE name = ? FOR UPDATE`;
  // The bound is set for the lock statement only, and the caller's own value put back.
  const restore = mode.begunBy
    ? async () => undefined
    : await dialect.boundLockWait!(run, mode.waitMs, mode.idleMs);
  let found: Row | undefined;
  try {
    [found] = await run(lockSql, [name]);
  } catch (error) {
    await restore(true);
    throw dialect.isLockError(error)
      ? new GaplessBusyError(name, mode.waitMs, { cause: error })
      : error;
  }
  await restore(false);
  if (!found) throw new GaplessSeriesNotFoundError(name);
  return new SqlGaplessLock(run, dialect, toSeries(found), found, mode);
}

/**
 * In-transaction mode (docs/design.md, "Gapless numbers"): a number of `series` taken inside the
 * caller's open transaction `db`, confirmed at once, so it commits or rolls back with the
 * caller's rows. With `documentKey`, a retry after a committed attempt answers that
 * attempt's number; a rolled-back attempt left nothing.
 * @throws {GaplessBusyError} when the series' lock was not free within `bounds.waitMs` (the
 *   caller's transaction is then to be rolled back and retried).
 * @throws {GaplessSeriesNotFoundError}, {@link GaplessSettledError} (the key's number was voided).
 */
export async function takeGaplessInTransaction(
  db: GaplessSqlExecutor,
  dialect: SqlDialect,
  series: string,
  documentKey: string | null,
  bounds: { waitMs: number; idleMs: number },
): Promise<GaplessNumber> {
  const lock = await openGaplessLock(db, dialect, series, { ...bounds, lockingReads: true });
  const [outcome] = await applyGaplessBatch(lock, [{ kind: 'take', key: documentKey }]);
  if (!outcome!.ok) throw outcome!.error;
  return outcome!.value as GaplessNumber;
}

/** {@link GaplessLock} over the statements of one transaction. */
class SqlGaplessLock implements WriteKeepingLock {
  readonly now: number;
  readonly head: { seq: bigint; hash: string };
  private readonly forUpdate: string;
  /** Periods whose counter row this transaction has seen. */
  private readonly counted = new Set<string>();
  kept: string | null = null;

  constructor(
    private readonly run: (sql: string, parameters?: unknown[]) => Promise<Row[]>,
    private readonly dialect: SqlDialect,
    readonly series: GaplessSeries,
    locked: Row,
    private readonly mode: GaplessLockMode,
  ) {
    this.now = Number(locked.now_ms);
    this.head = { seq: BigInt(String(locked.last_seq)), hash: String(locked.last_hash) };
    this.forUpdate = mode.lockingReads ? ' FOR UPDATE' : '';
  }

  async read(keys: readonly string[], periodKey: string | null): Promise<GaplessReads> {
    const name = this.series.name;
    const byKey = `SELECT 'number' AS kind, ${NUMBER_COLUMNS} FROM leaf_gapless_number WHERE series = ? AND idem_key IN (${keys.map(() => '?').join(', ')})`;
    if (this.forUpdate) {
      // Locking reads, one table each (a caller's transaction: in-transaction mode).
      const rows = keys.length > 0 ? await this.run(byKey + this.forUpdate, [name, ...keys]) : [];
      const last = periodKey === null ? 0n : await this.lockedCounter(periodKey);
      return { rows: rows.map(toNumberRow), last };
    }
    // The store's own transaction: the keys' rows and the counter in one statement.
    const parts: string[] = [];
    const parameters: unknown[] = [];
    if (keys.length > 0) {
      parts.push(byKey);
      parameters.push(name, ...keys);
    }
    if (periodKey !== null) {
      parts.push(
        "SELECT 'counter' AS kind, period_key, CAST(last_number AS CHAR) AS number, NULL AS idem_key, NULL AS state, NULL AS reason, NULL AS reserved_at, NULL AS expires_at, NULL AS settled_at FROM leaf_gapless_counter WHERE series = ? AND period_key = ?",
      );
      parameters.push(name, periodKey);
    }
    let last = 0n;
    const rows: GaplessNumberRow[] = [];
    for (const row of await this.run(parts.join(' UNION ALL '), parameters)) {
      if (row.kind === 'number') rows.push(toNumberRow(row));
      else {
        this.counted.add(periodKey!);
        last = BigInt(String(row.number));
      }
    }
    return { rows, last };
  }

  async expiredRows(limit: number): Promise<GaplessNumberRow[]> {
    const rows = await this.run(
      `SELECT ${NUMBER_COLUMNS} FROM leaf_gapless_number WHERE series = ? AND state = 'reserved' AND expires_at <= ? ORDER BY leaf_gapless_number.expires_at LIMIT ${Math.trunc(limit)}${this.forUpdate}`,
      [this.series.name, this.now],
    );
    return rows.map(toNumberRow);
  }

  async write(changes: GaplessChanges): Promise<void> {
    const statements: Statement[] = [];
    if (changes.created.length > 0) statements.push(this.insertNumbers(changes.created));
    if (changes.settled.length > 0) statements.push(...this.settle(changes.settled));
    if (changes.counter) statements.push(this.setCounter(changes.counter));
    if (changes.records.length > 0) statements.push(...this.append(changes.records));
    const { begunBy } = this.mode;
    if (begunBy)
      this.kept = statements.map(([sql, values]) => begunBy.inline(sql, values)).join('; ');
    else for (const [sql, values] of statements) await this.run(sql, values);
  }

  /** The period's counter, its row made first so the locking read takes a record lock. */
  private async lockedCounter(periodKey: string): Promise<bigint> {
    const at = [this.series.name, periodKey];
    // Never a gap lock that another series' first number of a period could meet.
    await this.run(
      this.dialect.insertIgnoring(
        'INTO leaf_gapless_counter (series, period_key, last_number) VALUES (?, ?, 0)',
      ),
      at,
    );
    const [row] = await this.run(
      `SELECT CAST(last_number AS CHAR) AS last_number FROM leaf_gapless_counter WHERE series = ? AND period_key = ?${this.forUpdate}`,
      at,
    );
    if (row) this.counted.add(periodKey);
    return row ? BigInt(String(row.last_number)) : 0n;
  }

  private insertNumbers(rows: readonly GaplessNumberRow[]): Statement {
    return [
      `INSERT INTO leaf_gapless_number (series, period_key, number, idem_key, state, reason, reserved_at, expires_at, settled_at) VALUES ${tuples(rows.length, 9)}`,
      rows.flatMap((row) => [
        this.series.name,
        row.periodKey,
        row.number,
        row.key,
        row.state,
        row.reason,
        row.reservedAt,
        row.expiresAt,
        row.settledAt,
      ]),
    ];
  }

  private settle(rows: readonly GaplessNumberRow[]): Statement[] {
    // One statement per outcome (confirmed, or voided for one reason), by key: the unique
    // (series, idem_key) index finds them.
    const groups = new Map<string, GaplessNumberRow[]>();
    const statements: Statement[] = [];
    for (const row of rows) {
      const group = JSON.stringify([row.state, row.reason, row.settledAt, row.key === null]);
      groups.set(group, [...(groups.get(group) ?? []), row]);
    }
    for (const group of groups.values()) {
      const { state, reason, settledAt } = group[0]!;
      const set =
        'UPDATE leaf_gapless_number SET state = ?, reason = ?, settled_at = ?, expires_at = NULL WHERE series = ?';
      if (group[0]!.key !== null) {
        statements.push([
          `${set} AND idem_key IN (${group.map(() => '?').join(', ')})`,
          [state, reason, settledAt, this.series.name, ...group.map((row) => row.key)],
        ]);
      } else {
        for (const row of group)
          statements.push([
            `${set} AND period_key = ? AND number = ?`,
            [state, reason, settledAt, this.series.name, row.periodKey, row.number],
          ]);
      }
    }
    return statements;
  }

  private setCounter({ periodKey, last }: GaplessCounter): Statement {
    // Under the series' lock nobody else writes the row: it exists when read() found it.
    if (this.counted.has(periodKey))
      return [
        'UPDATE leaf_gapless_counter SET last_number = ? WHERE series = ? AND period_key = ?',
        [last, this.series.name, periodKey],
      ];
    this.counted.add(periodKey);
    return [
      'INSERT INTO leaf_gapless_counter (series, period_key, last_number) VALUES (?, ?, ?)',
      [this.series.name, periodKey, last],
    ];
  }

  private append(records: readonly GaplessRecord[]): Statement[] {
    const last = records[records.length - 1]!;
    return [
      [
        `INSERT INTO leaf_gapless_record (series, seq, period_key, number, action, reason, idem_key, at, prev_hash, hash) VALUES ${tuples(records.length, 10)}`,
        records.flatMap((record) => [
          this.series.name,
          record.seq,
          record.periodKey,
          record.number,
          record.action,
          record.reason,
          record.key,
          record.at,
          record.prevHash,
          record.hash,
        ]),
      ],
      [
        'UPDATE leaf_gapless_series SET last_seq = ?, last_hash = ? WHERE name = ?',
        [last.seq, last.hash, this.series.name],
      ],
    ];
  }
}
