/**
 * The statements of `leaf_worker_lease` (migration `CreateLeafWorkerLease1700000000004`) in
 * MySQL/MariaDB's and PostgreSQL's dialects. Times are milliseconds: `expires_at` on the
 * database's clock (`nowMs`), `horizon` on the holder's. Bigints are read as text.
 */
export interface WorkerLeaseDialect {
  readonly name: 'MySQL/MariaDB' | 'PostgreSQL';
  /** The database's clock in milliseconds, as an SQL expression. */
  readonly nowMs: string;
  /** `?` placeholders as the driver takes them. */
  readonly sql: (text: string) => string;
}

const COLUMNS =
  'worker_id, holder, run, CAST(epoch AS CHAR) AS epoch, CAST(expires_at AS CHAR) AS expires_at, CAST(horizon AS CHAR) AS horizon';

/** MySQL and MariaDB: `NOW(3)` through `UNIX_TIMESTAMP`, independent of the session's time zone. */
export const MYSQL_LEASE_DIALECT: WorkerLeaseDialect = {
  name: 'MySQL/MariaDB',
  nowMs: 'CAST(ROUND(UNIX_TIMESTAMP(NOW(3)) * 1000) AS SIGNED)',
  sql: (text) => text,
};

/** PostgreSQL: `clock_timestamp()` (the real time, not the transaction's start); `$n` placeholders. */
export const POSTGRES_LEASE_DIALECT: WorkerLeaseDialect = {
  name: 'PostgreSQL',
  nowMs: 'CAST(EXTRACT(EPOCH FROM clock_timestamp()) * 1000 AS bigint)',
  sql: (text) => {
    let n = 0;
    return text.replace(/\?/g, () => `$${++n}`).replace(/ AS CHAR\)/g, ' AS text)');
  },
};

/** The statements of one dialect. */
export function workerLeaseStatements(d: WorkerLeaseDialect) {
  return {
    list: d.sql(`SELECT ${COLUMNS} FROM leaf_worker_lease WHERE name = ? ORDER BY worker_id`),
    one: d.sql(`SELECT ${COLUMNS} FROM leaf_worker_lease WHERE name = ? AND worker_id = ?`),
    lock: d.sql(
      `SELECT ${COLUMNS} FROM leaf_worker_lease WHERE name = ? ORDER BY worker_id FOR UPDATE`,
    ),
    now: d.sql(`SELECT CAST(${d.nowMs} AS CHAR) AS now_ms`),
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
