import type { MigrationInterface, QueryRunner } from 'typeorm';
import { createTableUnlessExists, isMysqlFamily, tableOptions } from './migration-sql';

/**
 * `leaf_sequence_issuer`: the database-held election of sequence mode (docs/design.md,
 * "Sequence mode on the database"), one row per service name and issuer group. `term` rises by
 * one on every claim; `expires_at` is milliseconds since the epoch on the database's clock;
 * `holder` is the issuing process's run ID and `address` where others forward to. Unused with
 * ZooKeeper; created everywhere so that switching needs no other migration.
 */
export class CreateLeafSequenceIssuer1700000000003 implements MigrationInterface {
  name = 'CreateLeafSequenceIssuer1700000000003';

  async up(queryRunner: QueryRunner): Promise<void> {
    const mysql = isMysqlFamily(queryRunner);
    await createTableUnlessExists(
      queryRunner,
      'leaf_sequence_issuer',
      `
      CREATE TABLE leaf_sequence_issuer (
        name varchar(128) NOT NULL,
        group_id int NOT NULL,
        holder varchar(64) DEFAULT NULL,
        address varchar(255) DEFAULT NULL,
        term bigint NOT NULL DEFAULT 0,
        expires_at bigint NOT NULL DEFAULT 0,
        update_time timestamp NOT NULL DEFAULT CURRENT_TIMESTAMP${mysql ? ' ON UPDATE CURRENT_TIMESTAMP' : ''},
        PRIMARY KEY (name, group_id)
      )${tableOptions(queryRunner)}`,
    );
  }

  /**
   * Drops the table: a successor then claims every group at term 1 again, which the fence
   * still serves safely only once every instance has stopped (the terms restart).
   */
  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TABLE leaf_sequence_issuer');
  }
}
