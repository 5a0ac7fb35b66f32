import type { SqlDialect } from './sql-dialect';
import { LEASE_NOW_MS } from './worker-lease.sql';

/**
 * The statements of `leaf_region_lease` (migration `CreateLeafRegionLease1700000000200`) in
 * MySQL/MariaDB's and PostgreSQL's dialects. `expires_at` is on the registry's clock (timed
 * like the worker leases), `horizon` and `floor_ms` on the holders'. Bigints are read as text.
 */

const COLUMNS =
  'data_center_id, region, CAST(epoch AS CHAR) AS epoch, CAST(expires_at AS CHAR) AS expires_at, CAST(horizon AS CHAR) AS horizon, CAST(floor_ms AS CHAR) AS floor_ms';

/** The statements of one dialect. */
export function regionLeaseStatements(dialect: SqlDialect) {
  const nowMs = LEASE_NOW_MS[dialect.kind] ?? dialect.nowMs;
  const sql = dialect.sql;
  const held = 'WHERE name = ? AND data_center_id = ? AND region = ? AND epoch = ?';
  return {
    one: sql(`SELECT ${COLUMNS} FROM leaf_region_lease WHERE name = ? AND data_center_id = ?`),
    lock: sql(
      `SELECT ${COLUMNS} FROM leaf_region_lease WHERE name = ? AND data_center_id = ?${dialect.forUpdate}`,
    ),
    insert: sql(
      'INSERT INTO leaf_region_lease (name, data_center_id, region, epoch, expires_at, horizon, floor_ms, update_time) VALUES (?, ?, ?, ?, ?, ?, ?, CURRENT_TIMESTAMP)',
    ),
    write: sql(
      'UPDATE leaf_region_lease SET region = ?, epoch = ?, expires_at = ?, horizon = ?, floor_ms = ?, update_time = CURRENT_TIMESTAMP WHERE name = ? AND data_center_id = ?',
    ),
    renew: sql(
      `UPDATE leaf_region_lease SET expires_at = GREATEST(expires_at, ${nowMs} + ?), horizon = GREATEST(horizon, ?), update_time = CURRENT_TIMESTAMP ${held}`,
    ),
  };
}
