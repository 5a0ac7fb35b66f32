import type { DataSource } from 'typeorm';

/**
 * Where the segment high-water mark lives (`segment.highWater`): a ZooKeeper ensemble
 * (`connect`) or a database of its own (`dataSource`), one of the two (docs/design.md,
 * "High-water mark").
 */
export type LeafHighWaterOptions = LeafHighWaterZookeeperOptions | LeafHighWaterDatabaseOptions;

/** The high-water mark in ZooKeeper, `/segment/{name}/high-water/{tag}`. */
export interface LeafHighWaterZookeeperOptions {
  /** Connect string, e.g. `127.0.0.1:2181,10.0.0.2:2181` (may be snowflake's). */
  connect: string;
  dataSource?: never;
  /** Requested session timeout. @default 10000 */
  sessionTimeoutMs?: number;
  /**
   * Most time one read or write of a mark may take; it runs while the tag's row is locked,
   * and an allocation not answered in time is refused (`LEAF_HIGH_WATER_UNAVAILABLE`).
   * @default 2000
   */
  callTimeoutMs?: number;
}

/**
 * The high-water mark in table `leaf_high_water` of a MySQL/MariaDB or PostgreSQL database
 * that is NOT the allocation database (a restore of that one would take the marks with it):
 * a second server, or at least a database restored and failed over on its own. Its schema
 * comes from `LEAF_HIGH_WATER_MIGRATIONS` (`nestjs-leaf/storage/typeorm`); the DataSource is the
 * application's to initialise and close, like `segment.dataSource`.
 */
export interface LeafHighWaterDatabaseOptions {
  /** The marks' database (driver `mysql`, `mariadb` or `postgres`). */
  dataSource: DataSource;
  connect?: never;
  /**
   * Most time one read or write of a mark may take; it runs while the tag's row is locked,
   * and an allocation not answered in time is refused (`LEAF_HIGH_WATER_UNAVAILABLE`).
   * @default 2000
   */
  callTimeoutMs?: number;
}

/** The high-water mark's options after defaults and validation; `null` in the segment options when off. */
export type ResolvedHighWaterOptions =
  | {
      readonly kind: 'zookeeper';
      readonly connect: string;
      readonly sessionTimeoutMs: number;
      readonly callTimeoutMs: number;
    }
  | {
      readonly kind: 'database';
      readonly dataSource: DataSource;
      readonly callTimeoutMs: number;
    };
