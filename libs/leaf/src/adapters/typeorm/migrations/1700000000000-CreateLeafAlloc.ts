import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Leaf's `leaf_alloc` table, column for column, empty: the tags are the application's
 * (create them with `SegmentAdminService`, the app's admin routes or an `INSERT`). In
 * nestjs-leaf 0.2 and earlier this migration also inserted Leaf's sample tag
 * `leaf-segment-test`; databases created then keep it, and the name is unchanged so their
 * `leaf_migrations` records still match.
 *
 * An existing `leaf_alloc` table (Leaf's own, or one recorded under another migrations
 * table) is adopted as it is: no CREATE.
 */
export class CreateLeafAlloc1700000000000 implements MigrationInterface {
  name = 'CreateLeafAlloc1700000000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    if (await queryRunner.hasTable('leaf_alloc')) return;
    // A string: TypeORM 1 has no 'sqlite' (node-sqlite3) driver type, 0.3 has both.
    const type: string = queryRunner.connection.options.type;
    if (type === 'better-sqlite3' || type === 'sqlite' || type === 'postgres') {
      // Neither SQLite nor PostgreSQL has an ON UPDATE clause: the stores set update_time
      // themselves. The same statement makes the Java Leaf's column types on both.
      await queryRunner.query(`
        CREATE TABLE leaf_alloc (
          biz_tag varchar(128) NOT NULL DEFAULT '' PRIMARY KEY,
          max_id bigint NOT NULL DEFAULT 1,
          step int NOT NULL,
          description varchar(256) DEFAULT NULL,
          update_time timestamp NOT NULL DEFAULT CURRENT_TIMESTAMP
        )`);
    } else {
      await queryRunner.query(`
        CREATE TABLE leaf_alloc (
          biz_tag varchar(128) NOT NULL DEFAULT '',
          max_id bigint(20) NOT NULL DEFAULT '1',
          step int(11) NOT NULL,
          description varchar(256) DEFAULT NULL,
          update_time timestamp NOT NULL DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP,
          PRIMARY KEY (biz_tag)
        ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4`);
    }
  }

  /**
   * Drops the table only while it holds no allocated range (at most the untouched sample
   * tag of a database created by 0.2 or earlier): dropping allocated ranges and running the
   * migration again would hand out the same IDs twice.
   */
  async down(queryRunner: QueryRunner): Promise<void> {
    const [row] = (await queryRunner.query(
      "SELECT COUNT(*) AS n FROM leaf_alloc WHERE NOT (biz_tag = 'leaf-segment-test' AND max_id = 1)",
    )) as Array<{ n: number | string }>;
    if (Number(row.n) > 0) {
      throw new Error(
        'Refusing to drop leaf_alloc: it holds allocated ranges, and re-creating it would re-issue their IDs. Back it up and drop it by hand if you really mean to.',
      );
    }
    await queryRunner.query('DROP TABLE leaf_alloc');
  }
}
