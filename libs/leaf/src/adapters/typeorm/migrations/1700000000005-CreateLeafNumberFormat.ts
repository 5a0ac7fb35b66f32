import type { MigrationInterface, QueryRunner } from 'typeorm';

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
    if (await queryRunner.hasTable('leaf_number_format')) return;
    const type: string = queryRunner.connection.options.type;
    const mysql = type === 'mysql' || type === 'mariadb';
    await queryRunner.query(`
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
      )${mysql ? ' ENGINE=InnoDB DEFAULT CHARSET=utf8mb4' : ''}`);
  }

  /**
   * Drops the table only while it is empty: a format defined again differently could print
   * numbers already issued (its period counters carry on in `leaf_alloc`).
   */
  async down(queryRunner: QueryRunner): Promise<void> {
    const [row] = (await queryRunner.query(
      'SELECT COUNT(*) AS n FROM leaf_number_format',
    )) as Array<{ n: number | string }>;
    if (Number(row!.n) > 0) {
      throw new Error(
        'Refusing to drop leaf_number_format: it holds business-number formats, and a format defined again differently could print numbers already issued. Drop it by hand if you really mean to.',
      );
    }
    await queryRunner.query('DROP TABLE leaf_number_format');
  }
}
