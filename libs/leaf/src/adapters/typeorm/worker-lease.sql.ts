import type { SqlDialect } from './sql-dialect';

/**
 * The statements of `leaf_worker_lease` (migration `CreateLeafWorkerLease1700000000004`) in
 * MySQL/MariaDB's and PostgreSQL's dialects. Times are milliseconds: `expires_at` on the
 * database's clock (`nowMs`), `horizon` on the holder's. Bigints are read as text.
 */

const COLUMNS =
  'worker_id, holder, run, CAST(epoch AS CHAR) AS epoch, CAST(expires_at AS CHAR) AS expires_at, CAST(horizon AS CHAR) AS horizon';

/**
 * The lease's clock where it is not the dialect's `nowMs`: on MySQL/MariaDB `NOW(3)` through
 * `UNIX_TIMESTAMP`, independent of the session's time zone, as leases have always been timed.
 */
export const LEASE_NOW_MS: Partial<Record<SqlDialect['kind'], string>> = {
  mysql: 'CAST(ROUND(UNIX_TIMESTAMP(NOW(3)) * 1000) AS SIGNED)',
};

/** The statements of one dialect. */
export function workerLeaseStatements(dialect: SqlDialect) {
  const d = { nowMs: LEASE_NOW_MS[dialect.kind] ?? dialect.nowMs, sql: dialect.sql };
  return {
    list: d.sql(`SELECT ${COLUMNS} FROM leaf_worker_lease WHERE name = ? ORDER BY worker_id`),
    one: d.sql(`SELECT ${COLUMNS} FROM leaf_worker_lease WHERE name = ? AND worker_id = ?`),
    lock: d.sql(
      `SELECT ${COLUMNS} FROM leaf_worker_lease WHERE name = ? ORDER BY worker_id${dialect.forUpdate}`,
    ),
    take: d.sql(
      `UPDATE leaf_worker_lease SET holder = ?, run = ?, epoch = epoch + 1, expires_at = ${d.nowMs} + ?, update_time = CURRENT_TIMESTAMP WHERE name = ? AND worker_id = ?`,
    ),
    insert: d.sql(
      `INSERT INTO leaf_worker_lease (name, worker_id, holder, run, epoch, expires_at, horizon, update_time) VALUES (?, ?, ?, ?, 1, ${d.nowMs} + ?, 0, CURRENT_TIMESTAMP)`,
    ),
    renew: d.sql(
      `UPDATE leaf_worker_lease SET expires_at = ${d.nowMs} + ?, horizon = GREATEST(horizon, ?), update_time = CURRENT_TIMESTAMP WHERE name = ? AND worker_id = ? AND run = ? AND epoch = ?`,
    ),
    journal: d.sql(
      'INSERT INTO leaf_worker_lease_journal (name, worker_id, epoch, holder, run, instance, claimed_at, after_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
    ),
    claims: d.sql(
      'SELECT worker_id, CAST(epoch AS CHAR) AS epoch, holder, run, instance, CAST(claimed_at AS CHAR) AS claimed_at, CAST(after_ms AS CHAR) AS after_ms FROM leaf_worker_lease_journal WHERE name = ? AND worker_id = ? ORDER BY id',
    ),
    release: d.sql(
      `UPDATE leaf_worker_lease SET expires_at = ${d.nowMs}, horizon = ?, update_time = CURRENT_TIMESTAMP WHERE name = ? AND worker_id = ? AND run = ? AND epoch = ?`,
    ),
  };
}
