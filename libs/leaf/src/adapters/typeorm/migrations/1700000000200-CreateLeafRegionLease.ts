import type { MigrationInterface, QueryRunner } from 'typeorm';
import { createTableUnlessExists, dropTableUnlessRows, tableOptions } from './migration-sql';

/**
 * `leaf_region_lease`, the region registry (docs/design.md, "Regions"): one row per namespace
 * and data-centre ID, leased to a region: `region`, `epoch` (+1 each time another region takes
 * it), `expires_at` (ms, the registry's clock), `horizon` (the last millisecond the region may
 * issue in) and `floor_ms` (the previous region's horizon). It lives in a database every region
 * reaches: `LEAF_REGION_MIGRATIONS`, never in `LEAF_MIGRATIONS`. MySQL/MariaDB and PostgreSQL.
 */
export class CreateLeafRegionLease1700000000200 implements MigrationInterface {
  name = 'CreateLeafRegionLease1700000000200';

  async up(queryRunner: QueryRunner): Promise<void> {
    await createTableUnlessExists(
      queryRunner,
      'leaf_region_lease',
      `
      CREATE TABLE leaf_region_lease (
        name varchar(128) NOT NULL,
        data_center_id int NOT NULL,
        region varchar(64) NOT NULL,
        epoch bigint NOT NULL,
        expires_at bigint NOT NULL,
        horizon bigint NOT NULL,
        floor_ms bigint NOT NULL,
        update_time timestamp NOT NULL DEFAULT CURRENT_TIMESTAMP,
        PRIMARY KEY (name, data_center_id)
      )${tableOptions(queryRunner)}`,
    );
  }

  /** Refuses to drop held leases: without them two regions could take one data-centre ID. */
  async down(queryRunner: QueryRunner): Promise<void> {
    await dropTableUnlessRows(
      queryRunner,
      'leaf_region_lease',
      'Refusing to drop leaf_region_lease: its rows say which region holds each data-centre ID (docs/operations.md, "Regions")',
    );
  }
}
