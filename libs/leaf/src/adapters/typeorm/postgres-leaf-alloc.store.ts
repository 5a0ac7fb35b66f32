import { checkTagUpdate } from '../../core/segment/tag-definition';
import type { DataSource, QueryRunner } from 'typeorm';
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
  type StructuredSqlExecutor,
} from './leaf-alloc.sql';
import {
  MARK_HAND_BACK_SQL,
  checkPostgresLimits,
  isPostgresDuplicate,
  isPostgresLockError,
  postgresBeginSql,
  postgresSql,
} from './postgres-leaf-alloc.sql';
import { ALLOCATION_IDLE_SLACK_SEC } from './session-bound';
import { checkIssuerFence } from './sequence-issuer.sql';

/** Settings of {@link PostgresLeafAllocStore}. */
export interface PostgresLeafAllocStoreOptions {
  /**
   * `lock_timeout` of the allocating transaction, in seconds.
   * @default 5
   */
  lockWaitTimeoutSec?: number;
  /**
   * Longest silence, in seconds, of a session inside a transaction that locks a `leaf_alloc`
   * row before the server ends it (rolling it back and releasing the lock):
   * `idle_in_transaction_session_timeout`, set for each such transaction. It must exceed the
   * longest pause inside the transaction: with `highWater`, three of its calls
   * (`allocationIdleTimeoutSec`, which `LeafModule` uses).
   * @default 10
   */
  idleTimeoutSec?: number;
  /**
   * The per-tag high-water marks (docs/design.md, "High-water mark"), as for
   * `MysqlLeafAllocStore`.
   * @default null (no mark: only the in-memory range guard and the database trigger)
   */
  highWater?: HighWaterStore | null;
  /**
   * Read each row's residue class (`id_modulus`, `id_residue`) with every allocation and
   * listing: set for a database that serves tags with others (docs/design.md, "Several
   * databases per tag").
   * @default false
   */
  residueClasses?: boolean;
}

type Sql = SqlExecutor & StructuredSqlExecutor;

/**
 * Range allocation on PostgreSQL (TypeORM `postgres` driver over pg), with the semantics of
 * `MysqlLeafAllocStore`: one READ COMMITTED transaction on one connection locks the row
 * (`SELECT … FOR UPDATE`), applies the allocation rule, adds the step and reads `max_id` back
 * before `COMMIT`; the row lock serialises every instance's allocations, so committed ranges
 * are disjoint.
 *
 * The statements are `leaf-alloc.sql.ts`'s, translated (`postgres-leaf-alloc.sql.ts`); `max_id`
 * is read as text and converted with `BigInt`, never through a JavaScript number. Each
 * row-locking transaction sets its own `lock_timeout` and `idle_in_transaction_session_timeout`
 * (`SET LOCAL`, gone at its end). A hand-back marks its transaction for the trigger of
 * `GuardLeafAllocMaxId`, which refuses every other update lowering `max_id`.
 */
export class PostgresLeafAllocStore implements LeafAllocStore {
  private readonly begin: string;
  private readonly fence: HighWaterFence | null;
  private readonly classes: boolean;
  private readonly sql: SqlExecutor;

  /** @throws {LeafConfigurationError} for a timeout that is not a whole number of seconds PostgreSQL takes. */
  constructor(
    private readonly dataSource: DataSource,
    options: PostgresLeafAllocStoreOptions = {},
  ) {
    this.begin = postgresBeginSql(
      checkPostgresLimits({
        lockWaitTimeoutSec: options.lockWaitTimeoutSec ?? 5,
        idleTimeoutSec: options.idleTimeoutSec ?? ALLOCATION_IDLE_SLACK_SEC,
      }),
    );
    this.fence = options.highWater ? new HighWaterFence(options.highWater) : null;
    this.classes = options.residueClasses ?? false;
    this.sql = postgresSql(dataSource);
  }

  /** True when allocations are fenced by a high-water mark. */
  get fenced(): boolean {
    return this.fence !== null;
  }

  async listTags(): Promise<string[]> {
    try {
      return await selectTags(this.sql);
    } catch (error) {
      throw toAllocationError('*', error, isPostgresLockError);
    }
  }

  async listAll(): Promise<LeafAllocRow[]> {
    try {
      return await selectRows(this.sql, this.classes);
    } catch (error) {
      throw toAllocationError('*', error, isPostgresLockError);
    }
  }

  async findTag(tag: string): Promise<LeafAllocRow | null> {
    try {
      return await selectRow(this.sql, tag, this.classes);
    } catch (error) {
      throw toAllocationError(tag, error, isPostgresLockError);
    }
  }

  async createTag(tag: NewTag): Promise<LeafAllocRow> {
    try {
      return await insertRow(this.sql, tag, isPostgresDuplicate);
    } catch (error) {
      throw toAllocationError(String(tag.tag), error, isPostgresLockError);
    }
  }

  async updateTag(tag: string, update: TagUpdate): Promise<LeafAllocRow> {
    // Checked before the row lock: a malformed tag never reaches the database.
    checkTagUpdate(tag, update);
    try {
      // One transaction: the row is locked while it is checked, changed and read back.
      return await this.lockingTransaction(async (sql) => {
        await sql.query('SELECT biz_tag FROM leaf_alloc WHERE biz_tag = ? FOR UPDATE', [tag]);
        return updateRow(sql, tag, update);
      });
    } catch (error) {
      throw toAllocationError(tag, error, isPostgresLockError);
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
      this.lockingTransaction(async (sql) => {
        // First, under a shared lock until COMMIT: a deposed sequence issuer gets nothing.
        if (issuer) await checkIssuerFence(sql, 'postgres', tag, issuer);
        return advanceRow(sql, tag, step, {
          lockRow: true,
          fence,
          classes: this.classes,
          journal: journal ?? null,
        });
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
      throw toAllocationError(tag, error, isPostgresLockError);
    }
  }

  async grantOf(tag: string, id: bigint): Promise<RangeGrant | null> {
    try {
      return await selectGrant(this.sql, tag, id);
    } catch (error) {
      throw toAllocationError(tag, error, isPostgresLockError);
    }
  }

  async handBack(tag: string, expectedMaxId: bigint, newMaxId: bigint): Promise<boolean> {
    const fence = this.fence;
    try {
      if (!checkHandBack(tag, expectedMaxId, newMaxId)) return false;
      return await this.lockingTransaction(async (sql) => {
        if (fence) {
          // The row locked, the mark lowered from exactly ours, then max_id, then COMMIT. A
          // failure after the mark was lowered leaves max_id above it: safe.
          const [row] = (await sql.query(
            `SELECT CAST(max_id AS CHAR) AS max_id${this.classes ? ', id_residue' : ''} FROM leaf_alloc WHERE biz_tag = ? FOR UPDATE`,
            [tag],
          )) as Array<{ max_id: string; id_residue?: number | string }>;
          if (row === undefined || row.max_id !== expectedMaxId.toString()) return false;
          const key = highWaterKey(tag, Number(row.id_residue ?? 0));
          if (!(await fence.handBack(key, expectedMaxId, newMaxId))) return false;
        }
        await sql.query(MARK_HAND_BACK_SQL, [expectedMaxId.toString()]);
        return handBackRow(sql, tag, expectedMaxId, newMaxId);
      });
    } catch (error) {
      throw toAllocationError(tag, error, isPostgresLockError);
    }
  }

  /**
   * Runs `work` in one row-locking transaction on one pooled connection
   * ({@link postgresBeginSql}), commits its result, rolls back on any failure. A connection
   * whose `ROLLBACK` fails (dropped, or ended by the server's idle bound) is discarded, never
   * returned to the pool inside a transaction.
   */
  private async lockingTransaction<T>(work: (sql: Sql) => Promise<T>): Promise<T> {
    const runner = this.dataSource.createQueryRunner();
    let failure: unknown = null;
    try {
      // Before BEGIN's answer the transaction may be open already: the catch rolls back.
      await runner.query(this.begin);
      const result = await work(postgresSql(runner));
      await runner.query('COMMIT');
      return result;
    } catch (error) {
      // The original failure (a lock timeout, say) is what the caller must see.
      await runner.query('ROLLBACK').catch((rollback: unknown) => (failure = rollback));
      throw error;
    } finally {
      await release(runner, failure);
    }
  }
}

/** Returns the runner's connection to the pool, or, after `failure`, has the pool close it. */
async function release(runner: QueryRunner, failure: unknown): Promise<void> {
  const postgres = runner as QueryRunner & {
    releasePostgresConnection?: (error?: Error) => Promise<void>;
  };
  if (failure !== null && postgres.releasePostgresConnection) {
    const error = failure instanceof Error ? failure : new Error(String(failure));
    await postgres.releasePostgresConnection(error);
  } else {
    await runner.release();
  }
}
