import type { MigrationInterface, QueryRunner } from 'typeorm';
import { createTableUnlessExists, dropTableUnlessRows, tableOptions } from './migration-sql';

/**
 * `leaf_worker_lease`: one row per namespace and snowflake worker ID leased from the database
 * (docs/design.md, "The database variant"): holder identity and run, `epoch` (fencing counter,
 * +1 on every claim), `expires_at` (milliseconds on the database's clock) and `horizon` (the
 * last millisecond the holder may issue IDs in, on its clock). Created on SQLite too, for one
 * schema everywhere; leases are taken on MySQL/MariaDB and PostgreSQL only.
 */
export class CreateLeafWorkerLease1700000000004 implements MigrationInterface {
  name = 'CreateLeafWorkerLease1700000000004';

  async up(queryRunner: QueryRunner): Promise<void> {
    await createTableUnlessExists(
      queryRunner,
      'leaf_worker_lease',
      `
      CREATE TABLE leaf_worker_lease (
        name varchar(128) NOT NULL,
        worker_id int NOT NULL,
        holder varchar(255) NOT NULL,
        run varchar(64) NOT NULL,
        epoch bigint NOT NULL,
        expires_at bigint NOT NULL,
        horizon bigint NOT NULL,
        update_time timestamp NOT NULL DEFAULT CURRENT_TIMESTAMP,
        PRIMARY KEY (name, worker_id)
      )${tableOptions(queryRunner)}`,
    );
  }

  /**
   * Drops the table only while no row records a horizon: a row's horizon is what keeps its
   * worker ID's next holder from issuing in milliseconds already used.
   */
  async down(queryRunner: QueryRunner): Promise<void> {
    await dropTableUnlessRows(
      queryRunner,
      'leaf_worker_lease',
      'Refusing to drop leaf_worker_lease: its rows record the horizons that keep worker IDs from repeating milliseconds. Stop every instance, wait past the largest horizon, and drop it by hand if you really mean to.',
      'horizon > 0',
    );
  }
}
