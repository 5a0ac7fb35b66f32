import { POSTGRES_DIALECT } from './postgres.dialect';
import { TypeormLeafAllocStore } from './typeorm-leaf-alloc.store';

/**
 * {@link TypeormLeafAllocStore} on PostgreSQL (TypeORM `postgres` driver over pg): the
 * statements translated (`postgres.dialect.ts`), `SELECT … FOR UPDATE` in a READ COMMITTED
 * transaction that sets its own `lock_timeout` and `idle_in_transaction_session_timeout`
 * (`SET LOCAL`), the hand-back marked with the transaction-local `leaf.hand_back_from`. Its
 * constructor throws {@link LeafConfigurationError} for a timeout that is not a whole number
 * of seconds PostgreSQL takes.
 */
export class PostgresLeafAllocStore extends TypeormLeafAllocStore {
  protected static override readonly dialect = POSTGRES_DIALECT;
}
