import type { DataSource } from 'typeorm';
import { POSTGRES_DIALECT } from './postgres.dialect';
import {
  TypeormLeafAllocStore,
  type TypeormLeafAllocStoreOptions,
} from './typeorm-leaf-alloc.store';

/** Settings of {@link PostgresLeafAllocStore}. */
export type PostgresLeafAllocStoreOptions = TypeormLeafAllocStoreOptions;

/**
 * {@link TypeormLeafAllocStore} on PostgreSQL (TypeORM `postgres` driver over pg): the
 * statements translated (`postgres.dialect.ts`), `SELECT … FOR UPDATE` in a READ COMMITTED
 * transaction that sets its own `lock_timeout` and `idle_in_transaction_session_timeout`
 * (`SET LOCAL`), the hand-back marked with the transaction-local `leaf.hand_back_from`.
 */
export class PostgresLeafAllocStore extends TypeormLeafAllocStore {
  /** @throws {LeafConfigurationError} for a timeout that is not a whole number of seconds PostgreSQL takes. */
  constructor(dataSource: DataSource, options: PostgresLeafAllocStoreOptions = {}) {
    super(dataSource, POSTGRES_DIALECT, options);
  }
}
