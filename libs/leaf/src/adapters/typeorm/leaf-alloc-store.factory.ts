import type { DataSource } from 'typeorm';
import { LeafConfigurationError } from '../../core/errors/leaf-configuration.error';
import type { LeafAllocStore } from '../../core/segment/leaf-alloc-store.port';
import { MysqlLeafAllocStore } from './mysql-leaf-alloc.store';
import { PostgresLeafAllocStore } from './postgres-leaf-alloc.store';
import { dialectOf } from './sql-dialect';
import { SqliteLeafAllocStore } from './sqlite-leaf-alloc.store';
import type { TypeormLeafAllocStoreOptions } from './typeorm-leaf-alloc.store';

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
  options: Pick<
    TypeormLeafAllocStoreOptions,
    'highWater' | 'residueClasses' | 'idleTimeoutSec'
  > = {},
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
  if (dialect.kind === 'sqlite') return new SqliteLeafAllocStore(dataSource);
  const { highWater, residueClasses, idleTimeoutSec } = options;
  const Store = dialect.kind === 'mysql' ? MysqlLeafAllocStore : PostgresLeafAllocStore;
  return new Store(dataSource, { highWater, residueClasses, idleTimeoutSec });
}
