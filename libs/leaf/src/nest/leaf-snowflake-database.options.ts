import type { DataSource } from 'typeorm';
import type { RegionRegistry } from '../core/snowflake/region-registry.port';
import type { WorkerLeaseStore } from '../core/snowflake/worker-lease-store.port';

/**
 * Snowflake worker IDs leased from the database: a row of `leaf_worker_lease` (migration
 * `CreateLeafWorkerLease1700000000004`), claimed at start, renewed by the heartbeat
 * (`heartbeatIntervalMs`, each renewal `leaseMs` long), released at shutdown. See
 * docs/snowflake.md and docs/design.md, "The database variant".
 */
export interface LeafSnowflakeDatabaseOptions {
  /**
   * The MySQL/MariaDB or PostgreSQL DataSource holding `leaf_worker_lease`.
   * @default segment mode's `dataSource`
   */
  dataSource?: DataSource;
  /** A lease store of your own instead of `dataSource` (giving both is a configuration error). */
  store?: WorkerLeaseStore;
  /**
   * The holder stops issuing this long before its row could expire on the database's clock.
   * @default 1000
   */
  marginMs?: number;
  /** Most time one claim, renewal or release may take before it counts as failed. @default 2000 */
  callTimeoutMs?: number;
}

/**
 * The data-centre ID leased to this instance's region from a region registry every region
 * reaches (docs/operations.md, "Regions"): a second region asking for it is refused
 * (`LEAF_DATA_CENTER_HELD`), and an instance that cannot renew stops issuing before the lease
 * could end. Sets `snowflake.dataCenterId`.
 */
export interface LeafSnowflakeRegionOptions {
  /** This region's name (the lease's holder, shared by all its instances). */
  name: string;
  /** The data-centre ID this region asks for. */
  dataCenterId: number;
  /** The MySQL/MariaDB or PostgreSQL DataSource holding `leaf_region_lease` (`LEAF_REGION_MIGRATIONS`). */
  dataSource?: DataSource;
  /** A registry of your own instead of `dataSource` (giving both is a configuration error). */
  store?: RegionRegistry;
  /**
   * Each claim or renewal keeps the lease this long past the registry's now.
   * @default 14400000 (4 h)
   */
  leaseMs?: number;
  /** Period of the background renewal. @default 300000 */
  renewIntervalMs?: number;
  /** An instance stops issuing this long before its region's lease could end. @default 60000 */
  marginMs?: number;
  /** Most time one claim or renewal may take. @default 5000 */
  callTimeoutMs?: number;
}

/** Where snowflake worker IDs come from besides `zookeeper`, `workerId` and `ordinal`. */
export interface LeafSnowflakeCoordinationOptions {
  /**
   * Lease worker IDs from the database (no ZooKeeper): `true` or options. Exclusive with
   * `zookeeper`, `workerId` and `ordinal`. When none of those is given and segment mode's
   * `dataSource` is MySQL/MariaDB or PostgreSQL, this is the default; `false` turns that off.
   * The identity recorded in the row is `advertise` (default: the host name).
   * @default true when segment mode's dataSource is MySQL/MariaDB or PostgreSQL and no other source is set
   */
  database?: LeafSnowflakeDatabaseOptions | boolean;
  /** The data-centre ID leased from a region registry. @default none: `dataCenterId` as given */
  region?: LeafSnowflakeRegionOptions;
}
