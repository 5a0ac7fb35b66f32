import type { MigrationInterface, QueryRunner } from 'typeorm';
import {
  MYSQL_TABLE_OPTIONS,
  createTableUnlessExists,
  databaseType,
  dropTableUnlessRows,
} from './migration-sql';

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
    // Neither SQLite nor PostgreSQL has an ON UPDATE clause: the stores set update_time
    // themselves. The same statement makes the Java Leaf's column types on both.
    const statement = ['better-sqlite3', 'sqlite', 'postgres'].includes(databaseType(queryRunner))
      ? `
        CREATE TABLE leaf_alloc (
          biz_tag varchar(128) NOT NULL DEFAULT '' PRIMARY KEY,
          max_id bigint NOT NULL DEFAULT 1,
          step int NOT NULL,
          description varchar(256) DEFAULT NULL,
          update_time timestamp NOT NULL DEFAULT CURRENT_TIMESTAMP
        )`
      : `
        CREATE TABLE leaf_alloc (
          biz_tag varchar(128) NOT NULL DEFAULT '',
          max_id bigint(20) NOT NULL DEFAULT '1',
          step int(11) NOT NULL,
          description varchar(256) DEFAULT NULL,
          update_time timestamp NOT NULL DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP,
          PRIMARY KEY (biz_tag)
        )${MYSQL_TABLE_OPTIONS}`;
    await createTableUnlessExists(queryRunner, 'leaf_alloc', statement);
  }

  /**
   * Drops the table only while it holds no allocated range (at most the untouched sample
   * tag of a database created by 0.2 or earlier): dropping allocated ranges and running the
   * migration again would hand out the same IDs twice.
   */
  async down(queryRunner: QueryRunner): Promise<void> {
    await dropTableUnlessRows(
      queryRunner,
      'leaf_alloc',
      'Refusing to drop leaf_alloc: it holds allocated ranges, and re-creating it would re-issue their IDs. Back it up and drop it by hand if you really mean to.',
      "NOT (biz_tag = 'leaf-segment-test' AND max_id = 1)",
    );
  }
}
