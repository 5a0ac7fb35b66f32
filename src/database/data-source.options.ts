import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import type { DataSourceOptions } from 'typeorm';
import {
  LEAF_HIGH_WATER_MIGRATIONS,
  LEAF_REGION_MIGRATIONS,
  LeafAllocEntity,
} from 'nestjs-leaf/storage/typeorm';
import { APP_MIGRATIONS, APP_MIGRATIONS_TABLE_NAME } from './app-migrations';
import type { DatabaseConfig } from '../config/database-config';

/** What a database holds: `leaf_alloc` (and the rest), the marks, or the region registry. */
export type DatabaseRole = 'allocation' | 'high-water' | 'region';

const MIGRATIONS_OF = {
  allocation: APP_MIGRATIONS,
  'high-water': LEAF_HIGH_WATER_MIGRATIONS,
  region: LEAF_REGION_MIGRATIONS,
} as const;

/**
 * TypeORM options for the configured database. The schema comes only from the migrations
 * (`synchronize: false`): the application's set (./app-migrations.ts: the library's
 * `LEAF_MIGRATIONS`, then the application's own), recorded in `leaf_migrations`; for the
 * high-water marks' database (`role: 'high-water'`), `LEAF_HIGH_WATER_MIGRATIONS` only; for the
 * region registry's (`role: 'region'`), `LEAF_REGION_MIGRATIONS` only.
 */
export function buildDataSourceOptions(
  database: DatabaseConfig,
  role: DatabaseRole = 'allocation',
): DataSourceOptions {
  const common = {
    entities: role === 'allocation' ? [LeafAllocEntity] : [],
    // The marks' database gets leaf_high_water only, never leaf_alloc (docs/design.md,
    // "High-water mark").
    migrations: MIGRATIONS_OF[role],
    migrationsTableName: APP_MIGRATIONS_TABLE_NAME,
    synchronize: false,
    logging: false,
  };
  if (database.type === 'sqlite') {
    if (database.path !== ':memory:') mkdirSync(dirname(database.path), { recursive: true });
    return {
      ...common,
      type: 'better-sqlite3',
      database: database.path,
      // WAL lets readers (monitoring) run beside the allocating writer. No busy_timeout: the
      // driver is synchronous, so SQLite's wait would block the event loop; the store retries
      // a busy write lock on a timer instead.
      prepareDatabase: (db: { pragma(source: string): unknown }) => {
        db.pragma('journal_mode = WAL');
        db.pragma('busy_timeout = 0');
      },
    };
  }
  if (database.type === 'postgres') {
    return {
      ...common,
      type: 'postgres',
      url: database.url,
      // pg returns int8 (max_id) as a decimal string: left so (no parseInt8), never a number.
      poolSize: 10,
      connectTimeoutMS: 5000,
    };
  }
  return {
    ...common,
    type: 'mysql',
    url: database.url,
    // BIGINT must arrive as a decimal string, never as a rounded JavaScript number.
    supportBigNumbers: true,
    bigNumberStrings: true,
    timezone: 'Z',
    poolSize: 10,
    connectTimeout: 5000,
  };
}
