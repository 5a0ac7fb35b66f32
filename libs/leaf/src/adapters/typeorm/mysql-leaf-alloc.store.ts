import { checkTagUpdate } from '../../core/segment/tag-definition';
import { QueryFailedError, type DataSource, type QueryRunner } from 'typeorm';
import type {
  AllocatedRange,
  IssuerFence,
  LeafAllocRow,
  LeafAllocStore,
  NewTag,
  RangeGrant,
  RangeJournalEntry,
  TagUpdate,
} from '../../core/segment/leaf-alloc-store.port';
import { HighWaterFence, withHighWaterRetry } from '../../core/segment/high-water';
import type { HighWaterStore } from '../../core/segment/high-water';
import { checkHandBack } from '../../core/segment/allocation-rule';
import { highWaterKey } from '../../core/segment/residue-class';
import { toAllocationError } from './allocation-error.mapper';
import { handBackRow, selectGrant } from './leaf-alloc.sql';
import { checkIssuerFence } from './sequence-issuer.sql';
import {
  ALLOCATION_IDLE_SLACK_SEC,
  DETECT_SESSION_BOUND_SQL,
  checkSessionLimits,
  sessionBoundOf,
  sessionBoundSql,
  type SessionBound,
  type SessionLimits,
} from './session-bound';
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
   * Longest silence, in seconds, of a session inside a transaction that locks a `leaf_alloc`
   * row before the server closes its connection (rolling it back and releasing the lock): a
   * process that died or froze while holding the row blocks the tag for about this long
   * instead of until `wait_timeout` (`session-bound.ts`). MariaDB: the idle-transaction
   * timeouts; MySQL: `wait_timeout` for the transaction's duration. It must exceed the longest
   * pause inside the transaction: with `highWater`, three of its calls
   * (`allocationIdleTimeoutSec`, which `LeafModule` uses).
   * @default 10
   */
  idleTimeoutSec?: number;
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
 * Every transaction that locks a row (allocation, tag update, fenced hand-back) bounds its
 * session around it (`session-bound.ts`): the lock wait (`lockWaitTimeoutSec`), and how long
 * the session may stay silent while it holds the lock (`idleTimeoutSec`), so a holder that
 * died blocks the tag for seconds, not for the server's `wait_timeout`.
 *
 * It runs plain SQL on the table `leaf_alloc` (`leaf-alloc.sql.ts`), so the DataSource need
 * not list `LeafAllocEntity`, and reads `max_id` as text, so it stays exact even on a
 * DataSource without `supportBigNumbers`/`bigNumberStrings`.
 */
export class MysqlLeafAllocStore implements LeafAllocStore {
  private readonly limits: SessionLimits;
  private readonly fence: HighWaterFence | null;
  private readonly classes: boolean;
  /** The server's {@link SessionBound}, detected on the first transaction. */
  private bound: SessionBound | null = null;

  /** @throws {LeafConfigurationError} for a timeout that is not a positive integer. */
  constructor(
    private readonly dataSource: DataSource,
    options: MysqlLeafAllocStoreOptions = {},
  ) {
    this.limits = checkSessionLimits({
      lockWaitTimeoutSec: options.lockWaitTimeoutSec ?? 5,
      idleTimeoutSec: options.idleTimeoutSec ?? ALLOCATION_IDLE_SLACK_SEC,
    });
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
    // Checked before the row lock: a malformed tag never reaches the database.
    checkTagUpdate(tag, update);
    try {
      // One transaction: the row is locked while it is checked, changed and read back.
      return await this.lockingTransaction(async (runner) => {
        await runner.query('SELECT biz_tag FROM leaf_alloc WHERE biz_tag = ? FOR UPDATE', [tag]);
        return updateRow(runner, tag, update);
      });
    } catch (error) {
      throw toAllocationError(tag, error, isMysqlLockError);
    }
  }

  async allocate(
    tag: string,
    step?: number,
    issuer?: IssuerFence,
    journal?: RangeJournalEntry,
  ): Promise<AllocatedRange> {
    const fence = this.fence;
    const once = () =>
      this.lockingTransaction(async (runner) => {
        // First, under a shared lock until COMMIT: a deposed sequence issuer gets nothing.
        if (issuer) await checkIssuerFence(runner, 'mysql', tag, issuer);
        return this.allocateInTransaction(runner, tag, step, journal ?? null);
      });
    try {
      if (!fence) return await once();
      // A lost compare-and-set rolls the allocation back and runs it again (bounded).
      return await withHighWaterRetry(tag, async () => {
        const range = await once();
        fence.committed(highWaterKey(tag, range.residue ?? 0), range.maxId);
        return range;
      });
    } catch (error) {
      throw toAllocationError(tag, error, isMysqlLockError);
    }
  }

  async grantOf(tag: string, id: bigint): Promise<RangeGrant | null> {
    try {
      return await selectGrant(this.dataSource, tag, id);
    } catch (error) {
      throw toAllocationError(tag, error, isMysqlLockError);
    }
  }

  async handBack(tag: string, expectedMaxId: bigint, newMaxId: bigint): Promise<boolean> {
    const fence = this.fence;
    try {
      if (!fence) {
        // Without a mark: one autocommit statement, guarded by the expected max_id.
        const runner = this.dataSource.createQueryRunner();
        try {
          return await handBackRow(runner, tag, expectedMaxId, newMaxId, MARK);
        } finally {
          await runner.release();
        }
      }
      if (!checkHandBack(tag, expectedMaxId, newMaxId)) return false;
      // With one: the row locked, the mark lowered from exactly ours, then max_id, then
      // COMMIT. A failure after the mark was lowered leaves max_id above it: safe.
      return await this.lockingTransaction(async (runner) => {
        const [row] = (await runner.query(
          `SELECT CAST(max_id AS CHAR) AS max_id${this.classes ? ', id_residue' : ''} FROM leaf_alloc WHERE biz_tag = ? FOR UPDATE`,
          [tag],
        )) as Array<{ max_id: string; id_residue?: number | string }>;
        const key = highWaterKey(tag, Number(row?.id_residue ?? 0));
        return (
          row !== undefined &&
          row.max_id === expectedMaxId.toString() &&
          (await fence.handBack(key, expectedMaxId, newMaxId)) &&
          (await handBackRow(runner, tag, expectedMaxId, newMaxId, MARK))
        );
      });
    } catch (error) {
      throw toAllocationError(tag, error, isMysqlLockError);
    }
  }

  /**
   * Runs `work` in one READ COMMITTED transaction on one pooled connection whose session is
   * bounded for its duration (`session-bound.ts`): the limits are set before `START
   * TRANSACTION` and the session's own values put back after `COMMIT` or `ROLLBACK`, so every
   * pause while the row is locked, up to the `COMMIT`, is covered.
   */
  private async lockingTransaction<T>(work: (runner: QueryRunner) => Promise<T>): Promise<T> {
    const runner = this.dataSource.createQueryRunner();
    try {
      const { set, restore } = sessionBoundSql(await this.sessionBound(runner), this.limits);
      await runner.query(set);
      try {
        await runner.startTransaction('READ COMMITTED');
        try {
          const result = await work(runner);
          await runner.commitTransaction();
          return result;
        } catch (error) {
          // The original failure (a lock timeout, say) is what the caller must see.
          if (runner.isTransactionActive) await runner.rollbackTransaction().catch(() => undefined);
          throw error;
        }
      } finally {
        // After a COMMIT that succeeded the range is ours whatever happens here. A session
        // that cannot be put back (its connection dropped, most likely) must not return to
        // the pool with our limits: it is closed instead.
        await runner.query(restore).catch(() => destroyConnection(runner));
      }
    } finally {
      await runner.release();
    }
  }

  /** The server's {@link SessionBound}: asked on the first transaction's connection, kept. */
  private async sessionBound(runner: QueryRunner): Promise<SessionBound> {
    this.bound ??= sessionBoundOf(await runner.query(DETECT_SESSION_BOUND_SQL));
    return this.bound;
  }

  private allocateInTransaction(
    runner: QueryRunner,
    tag: string,
    step: number | undefined,
    journal: RangeJournalEntry | null,
  ): Promise<AllocatedRange> {
    return advanceRow(runner, tag, step, {
      lockRow: true,
      fence: this.fence,
      classes: this.classes,
      journal,
    });
  }
}

/** Closes the pooled connection under `runner` instead of returning it to the pool. */
function destroyConnection(runner: QueryRunner): void {
  const connection = (runner as { databaseConnection?: { destroy?: () => void } })
    .databaseConnection;
  connection?.destroy?.();
}
