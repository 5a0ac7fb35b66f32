import { MYSQL_DIALECT } from './mysql.dialect';
import { TypeormLeafAllocStore } from './typeorm-leaf-alloc.store';

/**
 * {@link TypeormLeafAllocStore} on MySQL/MariaDB (TypeORM `mysql`/`mariadb` driver over
 * mysql2): `SELECT … FOR UPDATE`, each row-locking transaction's session bounded around it
 * (`session-bound.ts`), the hand-back marked with `@leaf_hand_back_from`. Its constructor
 * throws {@link LeafConfigurationError} for a timeout that is not a positive integer.
 */
export class MysqlLeafAllocStore extends TypeormLeafAllocStore {
  protected static override readonly dialect = MYSQL_DIALECT;
}
