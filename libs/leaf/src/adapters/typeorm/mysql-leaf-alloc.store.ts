import { QueryFailedError, type DataSource, type EntityManager } from 'typeorm';
import { AllocationError, IdOverflowError } from '../../core/errors/allocation.error';
import { TagNotFoundError } from '../../core/errors/tag-not-found.error';
import { toAllocationError } from './allocation-error.mapper';
import { LeafAllocEntity } from './leaf-alloc.entity';
import {
  MAX_INT64,
  type AllocatedRange,
  type LeafAllocRow,
  type LeafAllocStore,
} from '../../core/segment/leaf-alloc-store.port';

/** MySQL/MariaDB error numbers that mean "the row lock could not be taken". */
const LOCK_ERRNOS = new Set([1205 /* ER_LOCK_WAIT_TIMEOUT */, 1213 /* ER_LOCK_DEADLOCK */]);

function isMysqlLockError(error: unknown): boolean {
  const errno =
    error instanceof QueryFailedError ? (error.driverError as { errno?: number }).errno : undefined;
  return errno !== undefined && LOCK_ERRNOS.has(errno);
}

/** Settings of {@link MysqlLeafAllocStore}. */
export interface MysqlLeafAllocStoreOptions {
  /**
   * `innodb_lock_wait_timeout` of the allocating transaction, in seconds.
   * @default 5
   */
  lockWaitTimeoutSec?: number;
}

/**
 * Range allocation on MySQL/MariaDB (TypeORM `mysql` driver over mysql2).
 *
 * One transaction on one connection: lock the row (`SELECT … FOR UPDATE`), add the step
 * to `max_id`, read `max_id` back, commit. With the row serialised by the lock, every
 * committed range is disjoint from every earlier one, across any number of instances.
 */
export class MysqlLeafAllocStore implements LeafAllocStore {
  private readonly lockWaitTimeoutSec: number;

  constructor(
    private readonly dataSource: DataSource,
    options: MysqlLeafAllocStoreOptions = {},
  ) {
    this.lockWaitTimeoutSec = options.lockWaitTimeoutSec ?? 5;
  }

  async listTags(): Promise<string[]> {
    try {
      const rows = await this.dataSource
        .getRepository(LeafAllocEntity)
        .createQueryBuilder('a')
        .select('a.tag', 'tag')
        .getRawMany<{ tag: string }>();
      return rows.map((row) => row.tag);
    } catch (error) {
      throw toAllocationError('*', error, isMysqlLockError);
    }
  }

  async listAll(): Promise<LeafAllocRow[]> {
    try {
      return await this.dataSource.getRepository(LeafAllocEntity).find({ order: { tag: 'ASC' } });
    } catch (error) {
      throw toAllocationError('*', error, isMysqlLockError);
    }
  }

  async allocate(tag: string, step?: number): Promise<AllocatedRange> {
    try {
      return await this.dataSource.transaction('READ COMMITTED', (manager) =>
        this.allocateInTransaction(manager, tag, step),
      );
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
      range = await this.lockAndAdvance(manager, tag, step);
    } catch (error) {
      // The original failure (a lock timeout, say) is what the caller must see.
      await manager.query(restore).catch(() => undefined);
      throw error;
    }
    await manager.query(restore);
    return range;
  }

  private async lockAndAdvance(
    manager: EntityManager,
    tag: string,
    step: number | undefined,
  ): Promise<AllocatedRange> {
    const repository = manager.getRepository(LeafAllocEntity);
    const locked = await repository
      .createQueryBuilder('a')
      .setLock('pessimistic_write')
      .where('a.tag = :tag', { tag })
      .getOne();
    if (!locked) throw new TagNotFoundError(tag);
    const applied = step ?? locked.step;
    if (!Number.isInteger(applied) || applied <= 0) {
      throw new AllocationError(tag, `Tag "${tag}" has a non-positive step ${applied}`);
    }
    if (locked.maxId + BigInt(applied) > MAX_INT64)
      throw new IdOverflowError(tag, locked.maxId, applied);
    await repository
      .createQueryBuilder()
      .update(LeafAllocEntity)
      .set({ maxId: () => `max_id + ${applied}` })
      .where('biz_tag = :tag', { tag })
      .execute();
    // Read back inside the same transaction: the new value is ours alone while the lock is held.
    const after = await repository
      .createQueryBuilder('a')
      .select(['a.tag', 'a.maxId', 'a.step'])
      .where('a.tag = :tag', { tag })
      .getOneOrFail();
    return { tag, maxId: after.maxId, baseStep: after.step, appliedStep: applied };
  }
}
