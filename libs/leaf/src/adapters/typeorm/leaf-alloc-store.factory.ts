import type { DataSource } from 'typeorm';
import { LeafConfigurationError } from '../../core/errors/leaf-configuration.error';
import type { HighWaterStore } from '../../core/segment/high-water';
import type { LeafAllocStore } from '../../core/segment/leaf-alloc-store.port';
import { MysqlLeafAllocStore } from './mysql-leaf-alloc.store';
import { PostgresLeafAllocStore } from './postgres-leaf-alloc.store';
import { SqliteLeafAllocStore } from './sqlite-leaf-alloc.store';

/**
 * Picks the allocation store for a TypeORM `DataSource` by its driver; `highWater` fences
 * MySQL/MariaDB and PostgreSQL allocations with a high-water mark (docs/design.md);
 * `residueClasses` reads each row's residue class (several databases per tag);
 * `idleTimeoutSec` bounds a silent session holding a row lock
 * (`MysqlLeafAllocStoreOptions.idleTimeoutSec`, `PostgresLeafAllocStoreOptions.idleTimeoutSec`).
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
  switch (dataSource.options.type) {
    case 'mysql':
    case 'mariadb':
      return new MysqlLeafAllocStore(dataSource, {
        highWater: options.highWater ?? null,
        residueClasses: options.residueClasses ?? false,
        idleTimeoutSec: options.idleTimeoutSec,
      });
    case 'postgres':
      return new PostgresLeafAllocStore(dataSource, {
        highWater: options.highWater ?? null,
        residueClasses: options.residueClasses ?? false,
        idleTimeoutSec: options.idleTimeoutSec,
      });
    case 'better-sqlite3':
      if (options.highWater) {
        throw new LeafConfigurationError([
          'segment.highWater: the high-water mark fences MySQL/MariaDB and PostgreSQL allocations; SQLite serves one process (leave it out)',
        ]);
      }
      return new SqliteLeafAllocStore(dataSource);
    default:
      throw new LeafConfigurationError([
        `segment.dataSource: unsupported driver "${dataSource.options.type}" (use mysql, mariadb, postgres or better-sqlite3)`,
      ]);
  }
}
