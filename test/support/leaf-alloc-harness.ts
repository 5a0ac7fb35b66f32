/**
 * The LeafAllocStore contract's harness for the TypeORM stores: rows are seeded and read
 * with plain SQL on the DataSource, past the store. The statements run unchanged on
 * MySQL/MariaDB and SQLite (`?` placeholders; `CAST(… AS CHAR)` is text in both), and on
 * PostgreSQL through the store's own translation (`postgresSql(dataSource)`).
 */
import type { LeafAllocStore } from 'nestjs-leaf';
import { HighWaterUnavailableError } from '@app/leaf/core/errors/allocation.error';
import type { HighWaterStore } from '@app/leaf/core/segment/high-water';
import type { LeafAllocStoreHarness } from '@app/leaf/testing/contracts/leaf-alloc-store.contract';

export function sqlLeafAllocHarness(
  dataSource: { query(sql: string, parameters?: unknown[]): Promise<unknown> },
  store: LeafAllocStore,
  close: () => Promise<void>,
  /** A store on the same database whose allocations fail after the journal row (see the contract). */
  failingAfterJournal?: LeafAllocStore,
): LeafAllocStoreHarness {
  return {
    store,
    journal: {
      async rows(tag) {
        const rows = (await dataSource.query(
          'SELECT CAST(start_id AS CHAR) AS start_id, CAST(end_id AS CHAR) AS end_id, leaf_mode, instance, CAST(term AS CHAR) AS term FROM leaf_alloc_journal WHERE biz_tag = ? ORDER BY id',
          [tag],
        )) as Array<{
          start_id: string;
          end_id: string;
          leaf_mode: 'segment' | 'sequence';
          instance: string;
          term: string | null;
        }>;
        return rows.map((row) => ({
          start: BigInt(row.start_id),
          end: BigInt(row.end_id),
          mode: row.leaf_mode,
          instance: row.instance,
          term: row.term === null ? null : BigInt(row.term),
        }));
      },
      // A journal that cannot be written: its table renamed away (on all three databases).
      break: async () => {
        await dataSource.query('ALTER TABLE leaf_alloc_journal RENAME TO leaf_alloc_journal_off');
      },
      repair: async () => {
        await dataSource.query('ALTER TABLE leaf_alloc_journal_off RENAME TO leaf_alloc_journal');
      },
      failingAfterJournal,
    },
    async insert({ tag, maxId, step, description = null }) {
      // max_id as an integer literal: a bound string or number could be converted through a
      // double on the way in. It is a bigint, so the literal is digits only.
      await dataSource.query(
        `INSERT INTO leaf_alloc (biz_tag, max_id, step, description) VALUES (?, ${maxId.toString()}, ?, ?)`,
        [tag, step, description],
      );
    },
    async maxId(tag) {
      const rows = (await dataSource.query(
        'SELECT CAST(max_id AS CHAR) AS max_id FROM leaf_alloc WHERE biz_tag = ?',
        [tag],
      )) as Array<{ max_id: string }>;
      return rows.length === 0 ? null : BigInt(rows[0].max_id);
    },
    async count() {
      const [row] = (await dataSource.query('SELECT COUNT(*) AS n FROM leaf_alloc')) as Array<{
        n: number | string;
      }>;
      return Number(row.n);
    },
    async clear() {
      await dataSource.query('DELETE FROM leaf_alloc');
      await dataSource.query('DELETE FROM leaf_alloc_journal');
    },
    close,
  };
}

/**
 * A high-water store whose mark can be read (none yet) but never written: an allocation
 * fenced by it fails after its journal row, before the commit (the contract's rollback case).
 */
export const UNWRITABLE_HIGH_WATER: HighWaterStore = {
  read: async () => null,
  write: async (tag) => {
    throw new HighWaterUnavailableError(tag, 'written by no one (test)');
  },
};
