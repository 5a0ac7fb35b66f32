import type { DatabaseConfig } from './database-config';

/** The values of `LEAF_COORDINATION`: where instances coordinate (worker IDs, elections). */
export const COORDINATIONS = ['zookeeper', 'database'] as const;
export type Coordination = (typeof COORDINATIONS)[number];

/** What {@link coordinationOf} decides from. */
export interface CoordinationInput {
  /** `LEAF_COORDINATION` as set, or `undefined`. */
  readonly setting: Coordination | undefined;
  /** `LEAF_ZK_ADDRESS` as set (with sequence mode on, else `LEAF_SEQUENCE_ZK`), or `undefined`. */
  readonly zookeeper: string | undefined;
  /** The database (`LEAF_DB_URL`, or the embedded default). */
  readonly database: DatabaseConfig;
  /** True with `LEAF_DB_URLS` (several databases: none of them coordinates). */
  readonly severalDatabases: boolean;
  /** True when segment mode (which opens the database) is on. */
  readonly databaseOpen: boolean;
}

/**
 * Where instances coordinate: `LEAF_COORDINATION` when set; else `zookeeper` when
 * `LEAF_ZK_ADDRESS` is set (or `LEAF_SEQUENCE_ZK` with sequence mode on); else `database` when the database (`LEAF_DB_URL`) is
 * MySQL/MariaDB or PostgreSQL; else `null` (the explicit and embedded rules apply). The one
 * place this default is written (docs/configuration.md, docs/snowflake.md).
 */
export function coordinationOf(input: CoordinationInput): Coordination | null {
  if (input.setting !== undefined) return input.setting;
  if (input.zookeeper !== undefined) return 'zookeeper';
  if (input.databaseOpen && !input.severalDatabases && input.database.type !== 'sqlite')
    return 'database';
  return null;
}

/**
 * Why `coordination` cannot be used as configured, or `null`: `zookeeper` needs
 * `LEAF_ZK_ADDRESS`; `database` needs one MySQL/MariaDB or PostgreSQL database that segment
 * mode opens.
 */
export function coordinationProblem(
  coordination: Coordination | null,
  input: CoordinationInput,
): string | null {
  if (coordination === 'zookeeper' && input.zookeeper === undefined)
    return 'LEAF_COORDINATION=zookeeper needs LEAF_ZK_ADDRESS (or LEAF_SEQUENCE_ZK for sequence mode)';
  if (coordination !== 'database') return null;
  if (!input.databaseOpen)
    return 'LEAF_COORDINATION=database needs the database of segment mode (LEAF_SEGMENT_ENABLED=true)';
  if (input.severalDatabases)
    return 'LEAF_COORDINATION=database needs one database (LEAF_DB_URL), not LEAF_DB_URLS';
  if (input.database.type === 'sqlite')
    return 'LEAF_COORDINATION=database needs LEAF_DB_URL=mysql://… or postgres://… (SQLite serves one process)';
  return null;
}
