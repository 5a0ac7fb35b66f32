import { CreateLeafAlloc1700000000000 } from './1700000000000-CreateLeafAlloc';
import { GuardLeafAllocMaxId1700000000001 } from './1700000000001-GuardLeafAllocMaxId';
import { AddLeafAllocResidueClass1700000000002 } from './1700000000002-AddLeafAllocResidueClass';
import { CreateLeafSequenceIssuer1700000000003 } from './1700000000003-CreateLeafSequenceIssuer';
import { CreateLeafWorkerLease1700000000004 } from './1700000000004-CreateLeafWorkerLease';
import { CreateLeafNumberFormat1700000000005 } from './1700000000005-CreateLeafNumberFormat';
import { CreateLeafIdJournal1700000000006 } from './1700000000006-CreateLeafIdJournal';
import { CreateLeafGapless1700000000007 } from './1700000000007-CreateLeafGapless';
import { CreateLeafHighWater1700000000100 } from './1700000000100-CreateLeafHighWater';
import { CreateLeafRegionLease1700000000200 } from './1700000000200-CreateLeafRegionLease';

/** Each migration class, from its own file. */
export * from './1700000000000-CreateLeafAlloc';
export * from './1700000000001-GuardLeafAllocMaxId';
export * from './1700000000002-AddLeafAllocResidueClass';
export * from './1700000000003-CreateLeafSequenceIssuer';
export * from './1700000000004-CreateLeafWorkerLease';
export * from './1700000000005-CreateLeafNumberFormat';
export * from './1700000000006-CreateLeafIdJournal';
export * from './1700000000007-CreateLeafGapless';
export * from './1700000000100-CreateLeafHighWater';
export * from './1700000000200-CreateLeafRegionLease';

/**
 * Every migration of Leaf's schema (`leaf_alloc`; `leaf_sequence_issuer` and `leaf_worker_lease`,
 * the database-held coordination; `leaf_number_format`, the business-number formats; `leaf_alloc_journal` and
 * `leaf_worker_lease_journal`, the ID journal; the `leaf_gapless_*` tables of gapless series), in order. Give them to a TypeORM DataSource
 * (`migrations: LEAF_MIGRATIONS`) and run them with `migrationsRun: true`,
 * `dataSource.runMigrations()` or the TypeORM CLI. They work on MySQL/MariaDB, PostgreSQL and SQLite.
 */
export const LEAF_MIGRATIONS = [
  CreateLeafAlloc1700000000000,
  GuardLeafAllocMaxId1700000000001,
  AddLeafAllocResidueClass1700000000002,
  CreateLeafSequenceIssuer1700000000003,
  CreateLeafWorkerLease1700000000004,
  CreateLeafNumberFormat1700000000005,
  CreateLeafIdJournal1700000000006,
  CreateLeafGapless1700000000007,
];

/**
 * The migrations table name to use for a DataSource that runs {@link LEAF_MIGRATIONS}
 * (`migrationsTableName`): the library's own, so its records never mix with the
 * application's (TypeORM's default is `migrations`).
 */
export const LEAF_MIGRATIONS_TABLE_NAME = 'leaf_migrations';

/**
 * The migrations of the high-water marks' own database (`leaf_high_water`,
 * `segment.highWater.dataSource`): MySQL/MariaDB and PostgreSQL. Never run them on the
 * allocation database, nor {@link LEAF_MIGRATIONS} on the marks' (same table name for the
 * records, {@link LEAF_MIGRATIONS_TABLE_NAME}).
 */
export const LEAF_HIGH_WATER_MIGRATIONS = [CreateLeafHighWater1700000000100];

/**
 * The migrations of the region registry's database (`leaf_region_lease`,
 * `snowflake.region.dataSource`): MySQL/MariaDB and PostgreSQL, on a database every region
 * reaches (not one region's own database: a restore there must not take the leases back).
 */
export const LEAF_REGION_MIGRATIONS = [CreateLeafRegionLease1700000000200];
