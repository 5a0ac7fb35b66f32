/**
 * `nestjs-leaf/typeorm`: segment mode's table through TypeORM — the entity, the migrations
 * that create `leaf_alloc` (MySQL/MariaDB, PostgreSQL and SQLite) with their own migrations table name,
 * and the stores `LeafModule` builds from a `DataSource` (allocation, and the database-held
 * sequence election).
 */
export { LeafAllocEntity, bigintTransformer } from './adapters/typeorm/leaf-alloc.entity';
export {
  CreateLeafAlloc1700000000000,
  AddLeafAllocResidueClass1700000000002,
  CreateLeafSequenceIssuer1700000000003,
  LEAF_MIGRATIONS,
  LEAF_MIGRATIONS_TABLE_NAME,
} from './adapters/typeorm/migrations';
export { createLeafAllocStore } from './adapters/typeorm/leaf-alloc-store.factory';
export {
  MysqlLeafAllocStore,
  type MysqlLeafAllocStoreOptions,
} from './adapters/typeorm/mysql-leaf-alloc.store';
export {
  PostgresLeafAllocStore,
  type PostgresLeafAllocStoreOptions,
} from './adapters/typeorm/postgres-leaf-alloc.store';
export { SqliteLeafAllocStore } from './adapters/typeorm/sqlite-leaf-alloc.store';
export { TypeormSequenceIssuerStore } from './adapters/typeorm/typeorm-sequence-issuer.store';
