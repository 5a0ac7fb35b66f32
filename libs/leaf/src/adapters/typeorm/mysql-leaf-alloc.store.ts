import type { DataSource } from 'typeorm';
import { MYSQL_DIALECT } from './mysql.dialect';
import {
  TypeormLeafAllocStore,
  type TypeormLeafAllocStoreOptions,
} from './typeorm-leaf-alloc.store';

/** Settings of {@link MysqlLeafAllocStore}. */
export type MysqlLeafAllocStoreOptions = TypeormLeafAllocStoreOptions;

/**
 * {@link TypeormLeafAllocStore} on MySQL/MariaDB (TypeORM `mysql`/`mariadb` driver over
 * mysql2): `SELECT … FOR UPDATE`, each row-locking transaction's session bounded around it
 * (`session-bound.ts`), the hand-back marked with `@leaf_hand_back_from`.
 */
export class MysqlLeafAllocStore extends TypeormLeafAllocStore {
  /** @throws {LeafConfigurationError} for a timeout that is not a positive integer. */
  constructor(dataSource: DataSource, options: MysqlLeafAllocStoreOptions = {}) {
    super(dataSource, MYSQL_DIALECT, options);
  }
}
