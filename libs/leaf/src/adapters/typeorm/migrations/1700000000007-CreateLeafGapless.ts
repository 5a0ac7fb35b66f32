import type { MigrationInterface, QueryRunner } from 'typeorm';
import { createTableUnlessExists, refuseWhileRows, tableOptions } from './migration-sql';

/**
 * Gapless series (docs/design.md, "Gapless numbers"):
 *
 * - `leaf_gapless_series`: one row per series — how its numbers print, its period and time
 *   zone, the tax authority's code (`external_code`), the series it corrects
 *   (`corrections_of`) — and the head of its record chain (`last_seq`, `last_hash`). Locking
 *   this row is the series' lock.
 * - `leaf_gapless_counter`: the last number taken per series and period.
 * - `leaf_gapless_number`: every number taken, with its idempotency key (unique per series),
 *   its state (`reserved`, `confirmed`, `voided`), the reason of a void and the database-clock
 *   times (epoch ms); the index on `(series, state, expires_at)` finds expired reservations.
 * - `leaf_gapless_record`: the journal, one row per confirm or void, chained by SHA-256.
 *
 * MySQL/MariaDB, PostgreSQL and SQLite (the tables exist everywhere; the service needs
 * MySQL/MariaDB or PostgreSQL).
 */
export class CreateLeafGapless1700000000007 implements MigrationInterface {
  name = 'CreateLeafGapless1700000000007';

  async up(queryRunner: QueryRunner): Promise<void> {
    const engine = tableOptions(queryRunner);
    const tables: Array<[table: string, columns: string, ...indexes: string[]]> = [
      [
        'leaf_gapless_series',
        `name varchar(128) NOT NULL,
        prefix varchar(32) NOT NULL,
        width int NOT NULL,
        period varchar(8) NOT NULL,
        time_zone varchar(64) NOT NULL,
        external_code varchar(64) DEFAULT NULL,
        corrections_of varchar(128) DEFAULT NULL,
        created_at bigint NOT NULL,
        last_seq bigint NOT NULL DEFAULT 0,
        last_hash char(64) NOT NULL,
        PRIMARY KEY (name)`,
      ],
      [
        'leaf_gapless_counter',
        `series varchar(128) NOT NULL,
        period_key varchar(8) NOT NULL,
        last_number bigint NOT NULL,
        PRIMARY KEY (series, period_key)`,
      ],
      [
        'leaf_gapless_number',
        `series varchar(128) NOT NULL,
        period_key varchar(8) NOT NULL,
        number bigint NOT NULL,
        idem_key varchar(128) DEFAULT NULL,
        state varchar(16) NOT NULL,
        reason varchar(256) DEFAULT NULL,
        reserved_at bigint NOT NULL,
        expires_at bigint DEFAULT NULL,
        settled_at bigint DEFAULT NULL,
        PRIMARY KEY (series, period_key, number),
        CONSTRAINT leaf_gapless_number_key UNIQUE (series, idem_key)`,
        'CREATE INDEX leaf_gapless_number_expiry ON leaf_gapless_number (series, state, expires_at)',
      ],
      [
        'leaf_gapless_record',
        `series varchar(128) NOT NULL,
        seq bigint NOT NULL,
        period_key varchar(8) NOT NULL,
        number bigint NOT NULL,
        action varchar(8) NOT NULL,
        reason varchar(256) DEFAULT NULL,
        idem_key varchar(128) DEFAULT NULL,
        at bigint NOT NULL,
        prev_hash char(64) NOT NULL,
        hash char(64) NOT NULL,
        PRIMARY KEY (series, seq)`,
      ],
    ];
    for (const [table, columns, ...indexes] of tables) {
      const create = `CREATE TABLE ${table} (\n        ${columns}\n      )${engine}`;
      await createTableUnlessExists(queryRunner, table, create, ...indexes);
    }
  }

  /**
   * Drops the tables only while no number was taken: the numbers and their chained records
   * are evidence a tax audit may ask for.
   */
  async down(queryRunner: QueryRunner): Promise<void> {
    await refuseWhileRows(
      queryRunner,
      'leaf_gapless_number',
      'Refusing to drop the gapless tables: leaf_gapless_number holds numbers, and they and their records are evidence. Export and drop them by hand if you really mean to.',
    );
    for (const table of [
      'leaf_gapless_record',
      'leaf_gapless_number',
      'leaf_gapless_counter',
      'leaf_gapless_series',
    ])
      await queryRunner.query(`DROP TABLE ${table}`);
  }
}
