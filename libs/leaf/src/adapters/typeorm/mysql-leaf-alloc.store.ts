import { QueryFailedError, type DataSource, type EntityManager } from 'typeorm';
import type {
  AllocatedRange,
  LeafAllocRow,
  LeafAllocStore,
} from '../../core/segment/leaf-alloc-store.port';
import { HighWaterFence, withHighWaterRetry } from '../../core/segment/high-water';
import type { HighWaterStore } from '../../core/segment/high-water';
import { checkHandBack } from '../../core/segment/allocation-rule';
import { highWaterKey } from '../../core/segment/residue-class';
import { toAllocationError } from './allocation-error.mapper';
import { handBackRow } from './leaf-alloc.sql';
import type { NewTag, TagUpdate } from '../../core/segment/tag-definition';
import {
  advanceRow,
  insertRow,
  selectRow,
  selectRows,
  selectTags,
  updateRow,
} from './leaf-alloc.sql';

/** MySQL/MariaDB error numbers that mean "the row lock could not be taken". */
const LOCK_ERRNOS = new Set([1205 /* ER_LOCK_WAIT_TIMEOUT */, 1213 /* ER_LOCK_DEADLOCK */]);

function isMysqlLockError(error: unknown): boolean {
  const errno =
    error instanceof QueryFailedError ? (error.driverError as { errno?: number }).errno : undefined;
  return errno !== undefined && LOCK_ERRNOS.has(errno);
}

function isMysqlDuplicate(error: unknown): boolean {
  return (
    error instanceof QueryFailedError &&
    (error.driverError as { errno?: number }).errno === 1062 /* ER_DUP_ENTRY */
  );
}

/** The hand-back marks its session for the `leaf_alloc` trigger (GuardLeafAllocMaxId). */
const MARK = { markSession: true } as const;

/** Settings of {@link MysqlLeafAllocStore}. */
export interface MysqlLeafAllocStoreOptions {
  /**
   * `innodb_lock_wait_timeout` of the allocating transaction, in seconds.
   * @default 5
   */
  lockWaitTimeoutSec?: number;
  /**
   * The per-tag high-water marks (docs/design.md, "High-water mark"): every range starts at
   * or above the tag's mark, and the mark is raised past the range before it commits.
   * @default null (no mark: only the in-memory range guard and the database trigger)
   */
  highWater?: HighWaterStore | null;
  /**
   * Read each row's residue class (`id_modulus`, `id_residue`, migration
   * `AddLeafAllocResidueClass1700000000002`) with every allocation and listing: set for a
   * database that serves tags with others (docs/design.md, "Several databases per tag"). The
   * high-water mark is then kept per tag per database (per residue).
   * @default false (every ID of every range; the columns are not read)
   */
  residueClasses?: boolean;
}

/**
 * Range allocation on MySQL/MariaDB (TypeORM `mysql` driver over mysql2).
 *
 * One transaction on one connection: lock the row (`SELECT … FOR UPDATE`), apply the
 * allocation rule (`advanceMaxId`), add the step to `max_id`, read `max_id` back, commit.
 * With the row serialised by the lock, every committed range is disjoint from every earlier
 * one, across any number of instances.
 *
 * It runs plain SQL on the table `leaf_alloc` (`leaf-alloc.sql.ts`), so the DataSource need
 * not list `LeafAllocEntity`, and reads `max_id` as text, so it stays exact even on a
 * DataSource without `supportBigNumbers`/`bigNumberStrings`.
 */
export class MysqlLeafAllocStore implements LeafAllocStore {
  private readonly lockWaitTimeoutSec: number;
  private readonly fence: HighWaterFence | null;
  private readonly classes: boolean;

  constructor(
    private readonly dataSource: DataSource,
    options: MysqlLeafAllocStoreOptions = {},
  ) {
    this.lockWaitTimeoutSec = options.lockWaitTimeoutSec ?? 5;
    this.fence = options.highWater ? new HighWaterFence(options.highWater) : null;
    this.classes = options.residueClasses ?? false;
  }

  /** True when allocations are fenced by a high-water mark. */
  get fenced(): boolean {
    return this.fence !== null;
  }

  async listTags(): Promise<string[]> {
    try {
      return await selectTags(this.dataSource);
    } catch (error) {
      throw toAllocationError('*', error, isMysqlLockError);
    }
  }

  async listAll(): Promise<LeafAllocRow[]> {
    try {
      return await selectRows(this.dataSource, this.classes);
    } catch (error) {
      throw toAllocationError('*', error, isMysqlLockError);
    }
  }

  async findTag(tag: string): Promise<LeafAllocRow | null> {
    try {
      return await selectRow(this.dataSource, tag, this.classes);
    } catch (error) {
      throw toAllocationError(tag, error, isMysqlLockError);
    }
  }

  async createTag(tag: NewTag): Promise<LeafAllocRow> {
    try {
      return await insertRow(this.dataSource, tag, isMysqlDuplicate);
    } catch (error) {
      throw toAllocationError(String(tag.tag), error, isMysqlLockError);
    }
  }

  async updateTag(tag: string, update: TagUpdate): Promise<LeafAllocRow> {
    try {
      // One transaction: the row is locked while it is checked, changed and read back.
      return await this.dataSource.transaction('READ COMMITTED', async (manager) => {
        await manager.query('SELECT biz_tag FROM leaf_alloc WHERE biz_tag = ? FOR UPDATE', [tag]);
        return updateRow(manager, tag, update);
      });
    } catch (error) {
      throw toAllocationError(tag, error, isMysqlLockError);
    }
  }

  async allocate(tag: string, step?: number): Promise<AllocatedRange> {
    const fence = this.fence;
    try {
      if (!fence) {
        return await this.dataSource.transaction('READ COMMITTED', (manager) =>
          this.allocateInTransaction(manager, tag, step),
        );
      }
      // A lost compare-and-set rolls the allocation back and runs it again (bounded).
      return await withHighWaterRetry(tag, async () => {
        const range = await this.dataSource.transaction('READ COMMITTED', (manager) =>
          this.allocateInTransaction(manager, tag, step),
        );
        fence.committed(highWaterKey(tag, range.residue ?? 0), range.maxId);
        return range;
      });
    } catch (error) {
      throw toAllocationError(tag, error, isMysqlLockError);
    }
  }

  async handBack(tag: string, expectedMaxId: bigint, newMaxId: bigint): Promise<boolean> {
    const fence = this.fence;
    try {
      const runner = this.dataSource.createQueryRunner();
      try {
        // Without a mark: one autocommit statement, guarded by the expected max_id.
        if (!fence) return await handBackRow(runner, tag, expectedMaxId, newMaxId, MARK);
        if (!checkHandBack(tag, expectedMaxId, newMaxId)) return false;
        // With one: the row locked, the mark lowered from exactly ours, then max_id, then
        // COMMIT. A failure after the mark was lowered leaves max_id above it: safe.
        await runner.startTransaction('READ COMMITTED');
        try {
          const [row] = (await runner.query(
            `SELECT CAST(max_id AS CHAR) AS max_id${this.classes ? ', id_residue' : ''} FROM leaf_alloc WHERE biz_tag = ? FOR UPDATE`,
            [tag],
          )) as Array<{ max_id: string; id_residue?: number | string }>;
          const key = highWaterKey(tag, Number(row?.id_residue ?? 0));
          const lowered =
            row !== undefined &&
            row.max_id === expectedMaxId.toString() &&
            (await fence.handBack(key, expectedMaxId, newMaxId)) &&
            (await handBackRow(runner, tag, expectedMaxId, newMaxId, MARK));
          await runner.commitTransaction();
          return lowered;
        } catch (error) {
          await runner.rollbackTransaction().catch(() => undefined);
          throw error;
        }
      } finally {
        await runner.release();
      }
    } catch (error) {
      throw toAllocationError(tag, error, isMysqlLockError);
    }
  }

  private async allocateInTransaction(
    manager: EntityManager,
    tag: string,
    step: number | undefined,
  ): Promise<AllocatedRange> {
    // The connection belongs to the caller's pool: bound our lock wait, then put the
    // session's own setting back before the connection is released.
    await manager.query(
      `SET @leaf_lock_wait = @@SESSION.innodb_lock_wait_timeout, SESSION innodb_lock_wait_timeout = ${this.lockWaitTimeoutSec}`,
    );
    const restore = 'SET SESSION innodb_lock_wait_timeout = @leaf_lock_wait';
    let range: AllocatedRange;
    try {
      range = await advanceRow(manager, tag, step, {
        lockRow: true,
        fence: this.fence,
        classes: this.classes,
      });
    } catch (error) {
      // The original failure (a lock timeout, say) is what the caller must see.
      await manager.query(restore).catch(() => undefined);
      throw error;
    }
    await manager.query(restore);
    return range;
  }
}
