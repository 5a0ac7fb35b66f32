import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The user's own migration after Leaf's (the library creates `leaf_alloc` empty): their
 * first tag, in the same DataSource and migrations table as `LEAF_MIGRATIONS`.
 */
export class SeedDemoTag1796304233816 implements MigrationInterface {
  name = 'SeedDemoTag1796304233816';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      "INSERT INTO leaf_alloc (biz_tag, max_id, step, description) VALUES ('leaf-segment-test', 1, 2000, 'demo')",
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      "DELETE FROM leaf_alloc WHERE biz_tag = 'leaf-segment-test' AND max_id = 1",
    );
  }
}
