/**
 * The LeafAllocStore contract's harness for the TypeORM stores: rows are seeded and read
 * with plain SQL on the DataSource, past the store. The statements run unchanged on
 * MySQL/MariaDB and SQLite (`?` placeholders; `CAST(… AS CHAR)` is text in both), and on
 * PostgreSQL through the store's own translation (`postgresSql(dataSource)`).
 */
import type { LeafAllocStore } from 'nestjs-leaf';
import type { LeafAllocStoreHarness } from '@app/leaf/testing/contracts/leaf-alloc-store.contract';

export function sqlLeafAllocHarness(
  dataSource: { query(sql: string, parameters?: unknown[]): Promise<unknown> },
  store: LeafAllocStore,
  close: () => Promise<void>,
): LeafAllocStoreHarness {
  return {
    store,
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
    },
    close,
  };
}
