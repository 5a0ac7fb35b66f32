import type { MigrationInterface, QueryRunner } from 'typeorm';
import { createTableUnlessExists, dropTableUnlessRows, tableOptions } from './migration-sql';

/**
 * `leaf_number_format`: one row per tag with business numbers (docs/design.md, "Business
 * numbers"): prefix, separator, date pattern, IANA time zone, counter width, reset period and
 * the mode that issues the counters. The counters themselves are `leaf_alloc` rows (one per
 * period, `tag:20261204`), so this table holds configuration only. MySQL/MariaDB, PostgreSQL
 * and SQLite.
 */
export class CreateLeafNumberFormat1700000000005 implements MigrationInterface {
  name = 'CreateLeafNumberFormat1700000000005';

  async up(queryRunner: QueryRunner): Promise<void> {
    await createTableUnlessExists(
      queryRunner,
      'leaf_number_format',
      `
      CREATE TABLE leaf_number_format (
        biz_tag varchar(128) NOT NULL,
        leaf_mode varchar(16) NOT NULL,
        prefix varchar(32) NOT NULL,
        number_separator varchar(1) NOT NULL,
        date_pattern varchar(16) DEFAULT NULL,
        time_zone varchar(64) NOT NULL,
        counter_width int NOT NULL,
        reset_period varchar(8) NOT NULL,
        description varchar(256) DEFAULT NULL,
        update_time timestamp NOT NULL DEFAULT CURRENT_TIMESTAMP,
        PRIMARY KEY (biz_tag)
      )${tableOptions(queryRunner)}`,
    );
  }

  /**
   * Drops the table only while it is empty: a format defined again differently could print
   * numbers already issued (its period counters carry on in `leaf_alloc`).
   */
  async down(queryRunner: QueryRunner): Promise<void> {
    await dropTableUnlessRows(
      queryRunner,
      'leaf_number_format',
      'Refusing to drop leaf_number_format: it holds business-number formats, and a format defined again differently could print numbers already issued. Drop it by hand if you really mean to.',
    );
  }
}
