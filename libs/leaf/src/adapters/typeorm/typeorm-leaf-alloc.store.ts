import type { DataSource } from 'typeorm';
import { checkHandBack } from '../../core/segment/allocation-rule';
import { HighWaterFence, withHighWaterRetry } from '../../core/segment/high-water';
import type { HighWaterStore } from '../../core/segment/high-water';
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
import { highWaterKey } from '../../core/segment/residue-class';
import { checkTagUpdate } from '../../core/segment/tag-definition';
import { toAllocationError } from './allocation-error.mapper';
import {
  advanceRow,
  handBackRow,
  insertRow,
  selectGrant,
  selectRow,
  selectRows,
  selectTags,
  updateRow,
  type SqlExecutor,
} from './leaf-alloc.sql';
import { checkIssuerFence } from './sequence-issuer.sql';
import { ALLOCATION_IDLE_SLACK_SEC } from './session-bound';
import type { ConnectionSql, LockingTransactions, SqlDialect } from './sql-dialect';
import { withConnection } from './sql-dialect';

/** Settings of {@link TypeormLeafAllocStore}. */
export interface TypeormLeafAllocStoreOptions {
  /**
   * How long a row-locking transaction waits for the lock, in seconds: MySQL's
   * `innodb_lock_wait_timeout`, PostgreSQL's `lock_timeout`, SQLite's wait for the write lock.
   * @default 5
   */
  lockWaitTimeoutSec?: number;
  /**
   * Longest silence, in seconds, of a session inside a transaction that locks a `leaf_alloc`
   * row before the server ends it (rolling it back and releasing the lock): a process that
   * died or froze while holding the row blocks the tag for about this long instead of until
   * `wait_timeout` or TCP gives up (`session-bound.ts`). MariaDB: the idle-transaction
   * timeouts; MySQL: `wait_timeout` for the transaction's duration; PostgreSQL:
   * `idle_in_transaction_session_timeout`. It must exceed the longest pause inside the
   * transaction: with `highWater`, three of its calls (`allocationIdleTimeoutSec`, which
   * `LeafModule` uses). Not used on SQLite.
   * @default 10
   */
  idleTimeoutSec?: number;
  /**
   * The per-tag high-water marks (docs/design.md, "High-water mark"): every range starts at
   * or above the tag's mark, and the mark is raised past the range before it commits.
   * MySQL/MariaDB and PostgreSQL.
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

/** Settings of `MysqlLeafAllocStore`. */
export type MysqlLeafAllocStoreOptions = TypeormLeafAllocStoreOptions;
/** Settings of `PostgresLeafAllocStore`. */
export type PostgresLeafAllocStoreOptions = TypeormLeafAllocStoreOptions;

/**
 * Range allocation on a TypeORM DataSource, in the terms of its subclass's {@link SqlDialect}
 * (`MysqlLeafAllocStore`, `PostgresLeafAllocStore`, `SqliteLeafAllocStore`).
 *
 * One row-locking transaction on one connection: lock the row (`SELECT … FOR UPDATE`, or
 * SQLite's `BEGIN IMMEDIATE`), apply the allocation rule (`advanceMaxId`), add the step to
 * `max_id`, read `max_id` back, commit. With the row serialised by the lock, every committed
 * range is disjoint from every earlier one, across any number of instances. Each such
 * transaction bounds its lock wait and, on a server, how long its session may stay silent
 * while it holds the lock (`lockWaitTimeoutSec`, `idleTimeoutSec`).
 *
 * It runs plain SQL on the table `leaf_alloc` (`leaf-alloc.sql.ts`), so the DataSource need
 * not list `LeafAllocEntity`, and reads `max_id` as text, so it stays exact whatever the
 * driver's big-number settings. A hand-back marks its statement for the trigger of
 * `GuardLeafAllocMaxId`, which refuses every other update lowering `max_id`.
 */
export abstract class TypeormLeafAllocStore implements LeafAllocStore {
  /** The database each subclass speaks to. */
  declare protected static readonly dialect: SqlDialect;
  private readonly dialect: SqlDialect;
  private readonly fence: HighWaterFence | null;
  private readonly classes: boolean;
  private readonly sql: SqlExecutor;
  private readonly transaction: LockingTransactions;

  /** @throws {LeafConfigurationError} for a timeout the database does not take. */
  constructor(
    private readonly dataSource: DataSource,
    options: TypeormLeafAllocStoreOptions = {},
  ) {
    const dialect = new.target.dialect;
    this.dialect = dialect;
    this.transaction = dialect.lockingTransactions(
      dataSource,
      {
        lockWaitTimeoutSec: options.lockWaitTimeoutSec ?? 5,
        idleTimeoutSec: options.idleTimeoutSec ?? ALLOCATION_IDLE_SLACK_SEC,
      },
      new.target.name,
    );
    this.fence = options.highWater ? new HighWaterFence(options.highWater) : null;
    this.classes = options.residueClasses ?? false;
    this.sql = dialect.executor(dataSource);
  }

  /** True when allocations are fenced by a high-water mark. */
  get fenced(): boolean {
    return this.fence !== null;
  }

  listTags(): Promise<string[]> {
    return this.mapped('*', () => selectTags(this.sql));
  }

  listAll(): Promise<LeafAllocRow[]> {
    return this.mapped('*', () => selectRows(this.sql, this.classes));
  }

  findTag(tag: string): Promise<LeafAllocRow | null> {
    return this.mapped(tag, () => selectRow(this.sql, tag, this.classes));
  }

  createTag(tag: NewTag): Promise<LeafAllocRow> {
    const insert = (sql: SqlExecutor) => insertRow(sql, tag, this.dialect.isDuplicate);
    return this.mapped(String(tag.tag), () =>
      this.dialect.coordination ? insert(this.sql) : this.transaction(insert),
    );
  }

  updateTag(tag: string, update: TagUpdate): Promise<LeafAllocRow> {
    return this.mapped(tag, () => {
      // Checked before the row lock: a malformed tag never reaches the database.
      checkTagUpdate(tag, update);
      // One transaction: the row is locked while it is checked, changed and read back.
      return this.transaction(async (sql) => {
        if (this.dialect.forUpdate) {
          await sql.query(
            `SELECT biz_tag FROM leaf_alloc WHERE biz_tag = ?${this.dialect.forUpdate}`,
            [tag],
          );
        }
        return updateRow(sql, tag, update);
      });
    });
  }

  /** `issuer` is checked where the database-held election runs (not on SQLite). */
  allocate(
    tag: string,
    step?: number,
    issuer?: IssuerFence,
    journal?: RangeJournalEntry,
  ): Promise<AllocatedRange> {
    const fence = this.fence;
    const once = () =>
      this.transaction(async (sql) => {
        // First, under a shared lock until COMMIT: a deposed sequence issuer gets nothing.
        if (issuer && this.dialect.coordination)
          await checkIssuerFence(sql, this.dialect, tag, issuer);
        return advanceRow(sql, tag, step, {
          lock: this.dialect.forUpdate,
          fence,
          classes: this.classes,
          journal: journal ?? null,
        });
      });
    return this.mapped(tag, async () => {
      if (!fence) return once();
      // A lost compare-and-set rolls the allocation back and runs it again (bounded).
      return withHighWaterRetry(tag, async () => {
        const range = await once();
        fence.committed(highWaterKey(tag, range.residue ?? 0), range.maxId);
        return range;
      });
    });
  }

  grantOf(tag: string, id: bigint): Promise<RangeGrant | null> {
    return this.mapped(tag, () => selectGrant(this.sql, tag, id));
  }

  handBack(tag: string, expectedMaxId: bigint, newMaxId: bigint): Promise<boolean> {
    const fence = this.fence;
    const lower = (sql: ConnectionSql) =>
      handBackRow(sql, tag, expectedMaxId, newMaxId, this.dialect.handBackMark);
    return this.mapped(tag, async () => {
      if (!checkHandBack(tag, expectedMaxId, newMaxId)) return false;
      // No high-water mark, and a trigger mark that lasts the session (MySQL): one autocommit
      // statement, guarded by the expected max_id.
      if (!fence && this.dialect.coordination && this.dialect.handBackMark?.clear)
        return withConnection(this.dataSource, (runner) => lower(this.dialect.executor(runner)));
      return this.transaction(async (sql) => {
        if (fence) {
          // The row locked, the mark lowered from exactly ours, then max_id, then COMMIT. A
          // failure after the mark was lowered leaves max_id above it: safe.
          const [row] = (await sql.query(
            `SELECT CAST(max_id AS CHAR) AS max_id${this.classes ? ', id_residue' : ''} FROM leaf_alloc WHERE biz_tag = ?${this.dialect.forUpdate}`,
            [tag],
          )) as Array<{ max_id: string; id_residue?: number | string }>;
          if (row === undefined || row.max_id !== expectedMaxId.toString()) return false;
          const key = highWaterKey(tag, Number(row.id_residue ?? 0));
          if (!(await fence.handBack(key, expectedMaxId, newMaxId))) return false;
        }
        return lower(sql);
      });
    });
  }

  /** Runs `operation`, turning whatever it throws into a typed error for `tag`. */
  private async mapped<T>(tag: string, operation: () => Promise<T>): Promise<T> {
    try {
      return await operation();
    } catch (error) {
      throw toAllocationError(tag, error, this.dialect.isLockError);
    }
  }
}
