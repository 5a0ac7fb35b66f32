import type { DatabaseConfig } from './database-config';

/** What coordinates the instances: ZooKeeper, or a lease row in the database. */
export type Coordination = 'zookeeper' | 'database';

/** The values of `LEAF_COORDINATION`. */
export const COORDINATIONS = ['zookeeper', 'database'] as const;

/**
 * `LEAF_COORDINATION`'s value, or its default when unset: `zookeeper` when a ZooKeeper is
 * configured (`LEAF_SEQUENCE_ZK` / `LEAF_ZK_ADDRESS`), else `database` when `LEAF_DB_URL` is
 * MySQL/MariaDB or PostgreSQL, else `null` (SQLite without ZooKeeper: nothing to coordinate
 * through).
 */
export function coordinationOf(
  explicit: Coordination | undefined,
  zookeeperConfigured: boolean,
  database: DatabaseConfig,
): Coordination | null {
  if (explicit !== undefined) return explicit;
  if (zookeeperConfigured) return 'zookeeper';
  return database.type === 'sqlite' ? null : 'database';
}
