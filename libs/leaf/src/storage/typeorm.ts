/**
 * `nestjs-leaf/storage/typeorm`: segment mode's table through TypeORM — the entity, the migrations
 * that create `leaf_alloc` (MySQL/MariaDB, PostgreSQL and SQLite) with their own migrations table name,
 * the stores `LeafModule` builds from a `DataSource` (segment ranges; the database-held
 * coordination: snowflake worker-ID leases in `leaf_worker_lease`, the sequence election in
 * `leaf_sequence_issuer`), the business-number formats (`leaf_number_format`), and the high-water mark on a database of its own
 * (`leaf_high_water`, `LEAF_HIGH_WATER_MIGRATIONS`), and the region registry (`leaf_region_lease`,
 * `LEAF_REGION_MIGRATIONS`).
 */
export { LeafAllocEntity, bigintTransformer } from '../adapters/typeorm/leaf-alloc.entity';
export {
  CreateLeafAlloc1700000000000,
  AddLeafAllocResidueClass1700000000002,
  CreateLeafSequenceIssuer1700000000003,
  CreateLeafWorkerLease1700000000004,
  CreateLeafNumberFormat1700000000005,
  CreateLeafIdJournal1700000000006,
  CreateLeafHighWater1700000000100,
  CreateLeafRegionLease1700000000200,
  LEAF_HIGH_WATER_MIGRATIONS,
  LEAF_REGION_MIGRATIONS,
  LEAF_MIGRATIONS,
  LEAF_MIGRATIONS_TABLE_NAME,
} from '../adapters/typeorm/migrations';
export {
  TypeormHighWaterStore,
  type TypeormHighWaterStoreOptions,
} from '../adapters/typeorm/typeorm-high-water.store';
export type { LeafHighWaterDatabaseOptions } from '../nest/leaf-high-water-options';
export { createLeafAllocStore } from '../adapters/typeorm/leaf-alloc-store.factory';
export type {
  MysqlLeafAllocStoreOptions,
  PostgresLeafAllocStoreOptions,
} from '../adapters/typeorm/typeorm-leaf-alloc.store';
export { MysqlLeafAllocStore } from '../adapters/typeorm/mysql-leaf-alloc.store';
export { PostgresLeafAllocStore } from '../adapters/typeorm/postgres-leaf-alloc.store';
export { SqliteLeafAllocStore } from '../adapters/typeorm/sqlite-leaf-alloc.store';
export {
  TypeormWorkerLeaseStore,
  createWorkerLeaseStore,
  type TypeormWorkerLeaseStoreOptions,
} from '../adapters/typeorm/typeorm-worker-lease.store';
export { TypeormRegionRegistry } from '../adapters/typeorm/typeorm-region.registry';
export { TypeormSequenceIssuerStore } from '../adapters/typeorm/typeorm-sequence-issuer.store';
export { TypeormNumberFormatStore } from '../adapters/typeorm/typeorm-number-format.store';
