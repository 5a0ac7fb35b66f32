import type { MigrationInterface, QueryRunner } from 'typeorm';
import { createTableUnlessExists, dropTableUnlessRows, isPostgres } from './migration-sql';

/**
 * `leaf_high_water`, the table of the high-water marks on a database server of their own
 * (docs/design.md, "High-water mark"): one row per deployment name and key (a tag, or
 * `tag#residue`), `mark` a BIGINT never lowered except by a hand-back from exactly the
 * value it holds, `version` the compare-and-set's counter. It belongs in a database that is
 * NOT the allocation database (a restore of that would take the marks with it): this
 * migration is in `LEAF_HIGH_WATER_MIGRATIONS`, never in `LEAF_MIGRATIONS`.
 * MySQL/MariaDB and PostgreSQL.
 */
export class CreateLeafHighWater1700000000100 implements MigrationInterface {
  name = 'CreateLeafHighWater1700000000100';

  async up(queryRunner: QueryRunner): Promise<void> {
    const updated = isPostgres(queryRunner)
      ? 'updated_at timestamptz NOT NULL DEFAULT CURRENT_TIMESTAMP'
      : 'updated_at timestamp(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3)';
    await createTableUnlessExists(
      queryRunner,
      'leaf_high_water',
      `CREATE TABLE leaf_high_water (
        leaf_name varchar(64) NOT NULL,
        hw_key varchar(160) NOT NULL,
        mark bigint NOT NULL,
        version bigint NOT NULL DEFAULT 0,
        ${updated},
        PRIMARY KEY (leaf_name, hw_key)
      )`,
    );
  }

  /** Refuses to drop marks: without them a restored `leaf_alloc` would be re-served. */
  async down(queryRunner: QueryRunner): Promise<void> {
    await dropTableUnlessRows(
      queryRunner,
      'leaf_high_water',
      'Refusing to drop leaf_high_water: it holds high-water marks (docs/operations.md, "The database")',
    );
  }
}
