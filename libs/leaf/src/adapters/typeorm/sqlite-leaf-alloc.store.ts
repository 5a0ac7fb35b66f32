import type { DataSource } from 'typeorm';
import { SQLITE_DIALECT } from './sqlite.dialect';
import { TypeormLeafAllocStore } from './typeorm-leaf-alloc.store';

/**
 * {@link TypeormLeafAllocStore} on the embedded SQLite database (TypeORM `better-sqlite3`
 * driver): every write in a `BEGIN IMMEDIATE` transaction, one at a time in this process
 * (`sqlite.dialect.ts`); `max_id` read as text because SQLite's driver would round integers
 * above 2^53 through a JavaScript number. No high-water mark and no database-held election:
 * SQLite serves one process.
 */
export class SqliteLeafAllocStore extends TypeormLeafAllocStore {
  protected static override readonly dialect = SQLITE_DIALECT;

  /** `lockWaitTimeoutMs`: how long a write waits for another connection's write lock (default 5000). */
  constructor(dataSource: DataSource, options: { lockWaitTimeoutMs?: number } = {}) {
    super(dataSource, { lockWaitTimeoutSec: (options.lockWaitTimeoutMs ?? 5000) / 1000 });
  }
}
