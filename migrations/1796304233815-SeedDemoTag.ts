import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Leaf's sample tag, from its own setup script: what the README's first `curl` asks for. */
export const DEMO_TAG = {
  bizTag: 'leaf-segment-test',
  maxId: 1,
  step: 2000,
  description: 'Test leaf Segment Mode Get Id',
} as const;

/**
 * The application's demo tag `leaf-segment-test` (max_id 1, step 2000), seeded once into a
 * new, empty `leaf_alloc`. nestjs-leaf 0.2 and earlier seeded it in the library's own first
 * migration, so a database created then has the row already, and this migration leaves it
 * as it is: it inserts only into a table holding no tag at all, and then with
 * `INSERT IGNORE` / `ON CONFLICT DO NOTHING`. A tag an operator deleted is therefore never
 * re-created behind their back (re-creating a tag re-opens the IDs it handed out).
 */
export class SeedDemoTag1796304233815 implements MigrationInterface {
  name = 'SeedDemoTag1796304233815';

  async up(queryRunner: QueryRunner): Promise<void> {
    const [row] = (await queryRunner.query('SELECT COUNT(*) AS n FROM leaf_alloc')) as Array<{
      n: number | string;
    }>;
    if (Number(row.n) > 0) return;
    const type = typeOf(queryRunner);
    const insert =
      type === 'postgres'
        ? 'INSERT INTO leaf_alloc (biz_tag, max_id, step, description) VALUES ($1, $2, $3, $4) ON CONFLICT (biz_tag) DO NOTHING'
        : type === 'better-sqlite3'
          ? 'INSERT INTO leaf_alloc (biz_tag, max_id, step, description) VALUES (?, ?, ?, ?) ON CONFLICT (biz_tag) DO NOTHING'
          : 'INSERT IGNORE INTO leaf_alloc (biz_tag, max_id, step, description) VALUES (?, ?, ?, ?)';
    await queryRunner.query(insert, [
      DEMO_TAG.bizTag,
      DEMO_TAG.maxId,
      DEMO_TAG.step,
      DEMO_TAG.description,
    ]);
  }

  /**
   * Removes the demo tag while it is untouched (`max_id` still 1). Once it has handed out IDs
   * it stays: deleting it would let a later seed hand them out again.
   */
  async down(queryRunner: QueryRunner): Promise<void> {
    const [tag, maxId] = typeOf(queryRunner) === 'postgres' ? ['$1', '$2'] : ['?', '?'];
    await queryRunner.query(`DELETE FROM leaf_alloc WHERE biz_tag = ${tag} AND max_id = ${maxId}`, [
      DEMO_TAG.bizTag,
      DEMO_TAG.maxId,
    ]);
  }
}

/** The driver: PostgreSQL numbers its placeholders, MySQL and SQLite take `?`. */
function typeOf(queryRunner: QueryRunner): string {
  return queryRunner.connection.options.type;
}
