import type { DataSource } from 'typeorm';
import { LeafConfigurationError } from '../../core/errors/leaf-configuration.error';
import type { LeafAllocStore } from '../../core/segment/leaf-alloc-store.port';
import { MysqlLeafAllocStore } from './mysql-leaf-alloc.store';
import { SqliteLeafAllocStore } from './sqlite-leaf-alloc.store';

/**
 * Picks the allocation store for a TypeORM `DataSource` by its driver.
 * @throws {LeafConfigurationError} for a driver other than `mysql`/`mariadb`/`better-sqlite3`.
 */
export function createLeafAllocStore(dataSource: DataSource): LeafAllocStore {
  switch (dataSource.options.type) {
    case 'mysql':
    case 'mariadb':
      return new MysqlLeafAllocStore(dataSource);
    case 'better-sqlite3':
      return new SqliteLeafAllocStore(dataSource);
    default:
      throw new LeafConfigurationError([
        `segment.dataSource: unsupported driver "${dataSource.options.type}" (use mysql, mariadb or better-sqlite3)`,
      ]);
  }
}
