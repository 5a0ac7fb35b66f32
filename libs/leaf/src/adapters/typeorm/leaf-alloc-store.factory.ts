import type { DataSource } from 'typeorm';
import { LeafConfigurationError } from '../../core/errors/leaf-configuration.error';
import type { HighWaterStore } from '../../core/segment/high-water';
import type { LeafAllocStore } from '../../core/segment/leaf-alloc-store.port';
import { MysqlLeafAllocStore } from './mysql-leaf-alloc.store';
import { PostgresLeafAllocStore } from './postgres-leaf-alloc.store';
import { dialectOf, type SqlDialect } from './sql-dialect';
import { SqliteLeafAllocStore } from './sqlite-leaf-alloc.store';
import type { TypeormLeafAllocStoreOptions } from './typeorm-leaf-alloc.store';

/** The store of each dialect, by its public name. */
const STORES: Record<
  SqlDialect['kind'],
  (ds: DataSource, o: TypeormLeafAllocStoreOptions) => LeafAllocStore
> = {
  mysql: (ds, o) => new MysqlLeafAllocStore(ds, o),
  postgres: (ds, o) => new PostgresLeafAllocStore(ds, o),
  sqlite: (ds) => new SqliteLeafAllocStore(ds),
};

/**
 * The allocation store for a TypeORM `DataSource`, in the dialect of its driver
 * ({@link dialectOf}); `highWater` fences MySQL/MariaDB and PostgreSQL allocations with a
 * high-water mark (docs/design.md); `residueClasses` reads each row's residue class (several
 * databases per tag); `idleTimeoutSec` bounds a silent session holding a row lock
 * (`TypeormLeafAllocStoreOptions.idleTimeoutSec`).
 * @throws {LeafConfigurationError} for a driver other than `mysql`/`mariadb`/`postgres`/`better-sqlite3`.
 */
export function createLeafAllocStore(
  dataSource: DataSource,
  options: {
    highWater?: HighWaterStore | null;
    residueClasses?: boolean;
    idleTimeoutSec?: number;
  } = {},
): LeafAllocStore {
  const dialect = dialectOf(dataSource);
  if (!dialect) {
    throw new LeafConfigurationError([
      `segment.dataSource: unsupported driver "${dataSource.options.type}" (use mysql, mariadb, postgres or better-sqlite3)`,
    ]);
  }
  if (options.highWater && !dialect.coordination) {
    throw new LeafConfigurationError([
      'segment.highWater: the high-water mark fences MySQL/MariaDB and PostgreSQL allocations; SQLite serves one process (leave it out)',
    ]);
  }
  return STORES[dialect.kind](dataSource, {
    highWater: options.highWater ?? null,
    residueClasses: options.residueClasses ?? false,
    idleTimeoutSec: options.idleTimeoutSec,
  });
}
