import type { DataSource, QueryRunner } from 'typeorm';
import { ConcurrencyLimiter } from '../../core/concurrency-limiter';
import { AllocationError, IdOverflowError } from '../../core/errors/allocation.error';
import { TagNotFoundError } from '../../core/errors/tag-not-found.error';
import { toAllocationError } from './allocation-error.mapper';
import {
  MAX_INT64,
  type AllocatedRange,
  type LeafAllocRow,
  type LeafAllocStore,
} from '../../core/segment/leaf-alloc-store.port';

interface RawRow {
  tag: string;
  max_id: string;
  step: number;
  description: string | null;
  update_time: string | null;
}

/** SQLite reports contention as SQLITE_BUSY / SQLITE_LOCKED. */
function isSqliteLockError(error: unknown): boolean {
  const text =
    error instanceof Error ? `${error.message} ${String((error as { code?: unknown }).code)}` : '';
  return /SQLITE_BUSY|SQLITE_LOCKED|database is locked/i.test(text);
}

/**
 * Range allocation on the embedded SQLite database (TypeORM `better-sqlite3` driver).
 *
 * SQLite has no `SELECT … FOR UPDATE`; its own serialised write transaction (`BEGIN
 * IMMEDIATE` takes the database's write lock up front) plays that role across processes,
 * and an in-process queue keeps this process's allocations from interleaving on the
 * single connection. `max_id` is read as text because SQLite's driver would round
 * integers above 2^53 through a JavaScript number.
 */
export class SqliteLeafAllocStore implements LeafAllocStore {
  private readonly queue = new ConcurrencyLimiter(1);
  private readonly lockWaitMs: number;

  constructor(
    private readonly dataSource: DataSource,
    options: { lockWaitTimeoutMs?: number } = {},
  ) {
    this.lockWaitMs = options.lockWaitTimeoutMs ?? 5000;
  }

  async listTags(): Promise<string[]> {
    const rows: Array<{ tag: string }> = await this.read('SELECT biz_tag AS tag FROM leaf_alloc');
    return rows.map((row) => row.tag);
  }

  async listAll(): Promise<LeafAllocRow[]> {
    const rows: RawRow[] = await this.read(
      'SELECT biz_tag AS tag, CAST(max_id AS TEXT) AS max_id, step, description, update_time FROM leaf_alloc ORDER BY biz_tag',
    );
    return rows.map((row) => ({
      tag: row.tag,
      maxId: BigInt(row.max_id),
      step: row.step,
      description: row.description,
      updateTime: row.update_time ? new Date(`${row.update_time.replace(' ', 'T')}Z`) : null,
    }));
  }

  private async read<T>(sql: string): Promise<T> {
    try {
      return (await this.dataSource.query(sql)) as T;
    } catch (error) {
      throw toAllocationError('*', error, isSqliteLockError);
    }
  }

  allocate(tag: string, step?: number): Promise<AllocatedRange> {
    return this.queue.run(() => this.allocateSerialised(tag, step));
  }

  private async allocateSerialised(tag: string, step: number | undefined): Promise<AllocatedRange> {
    const runner = this.dataSource.createQueryRunner();
    let open = false;
    try {
      await this.beginImmediate(runner);
      open = true;
      const [row]: Array<Pick<RawRow, 'max_id' | 'step'>> = await runner.query(
        'SELECT CAST(max_id AS TEXT) AS max_id, step FROM leaf_alloc WHERE biz_tag = ?',
        [tag],
      );
      if (!row) throw new TagNotFoundError(tag);
      const applied = step ?? row.step;
      if (!Number.isInteger(applied) || applied <= 0) {
        throw new AllocationError(tag, `Tag "${tag}" has a non-positive step ${applied}`);
      }
      const current = BigInt(row.max_id);
      if (current + BigInt(applied) > MAX_INT64) throw new IdOverflowError(tag, current, applied);
      await runner.query(
        'UPDATE leaf_alloc SET max_id = max_id + ?, update_time = CURRENT_TIMESTAMP WHERE biz_tag = ?',
        [applied, tag],
      );
      const [after]: Array<Pick<RawRow, 'max_id' | 'step'>> = await runner.query(
        'SELECT CAST(max_id AS TEXT) AS max_id, step FROM leaf_alloc WHERE biz_tag = ?',
        [tag],
      );
      await runner.query('COMMIT');
      open = false;
      return { tag, maxId: BigInt(after.max_id), baseStep: after.step, appliedStep: applied };
    } catch (error) {
      if (open) await runner.query('ROLLBACK').catch(() => undefined);
      throw toAllocationError(tag, error, isSqliteLockError);
    } finally {
      await runner.release();
    }
  }

  /**
   * Takes the database's write lock. better-sqlite3 is synchronous, so SQLite's own
   * `busy_timeout` would freeze the event loop while another connection (another process,
   * or another DataSource on the same file) holds the lock: fail fast instead and retry on a
   * timer, up to `lockWaitTimeoutMs`.
   */
  private async beginImmediate(runner: QueryRunner): Promise<void> {
    const deadline = Date.now() + this.lockWaitMs;
    for (let pause = 5; ; pause = Math.min(pause * 2, 200)) {
      try {
        await runner.query('BEGIN IMMEDIATE');
        return;
      } catch (error) {
        if (!isSqliteLockError(error) || Date.now() + pause > deadline) throw error;
        await new Promise((resolve) => setTimeout(resolve, pause));
      }
    }
  }
}
