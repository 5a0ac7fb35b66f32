import type { MigrationInterface, QueryRunner } from 'typeorm';
import { HAND_BACK_SETTING } from '../postgres.dialect';
import { isMysqlFamily, isPostgres } from './migration-sql';

/** The trigger's name; its message names it too. */
const MAX_ID_GUARD_TRIGGER = 'leaf_alloc_max_id_guard';

/**
 * A database-side refusal of an update that lowers `leaf_alloc.max_id` (MySQL/MariaDB):
 * a `BEFORE UPDATE` trigger SIGNALs `45000` unless the session marked the statement as
 * Leaf's guarded hand-back (`@leaf_hand_back_from` equal to the row's current `max_id`; the
 * store sets it around its one `UPDATE … WHERE max_id = <ours>` and clears it after).
 *
 * It stops the accidental hand edit (`UPDATE leaf_alloc SET max_id = max_id - 5000`), not a
 * determined one (anyone can set the variable), and not a restore (`DROP`/`CREATE`/`INSERT`
 * fire no update trigger): those are the high-water mark's (docs/design.md). SQLite: no
 * trigger (one process owns the file). Creating a trigger needs the `TRIGGER` privilege (and,
 * with binary logging, `log_bin_trust_function_creators` or SUPER).
 *
 * PostgreSQL: the same rule in a PL/pgSQL trigger function of the same name, the mark being
 * the transaction-local setting `leaf.hand_back_from` (`set_config(…, true)`); it raises
 * `P0001` with the same message. Creating them needs `CREATE` on the schema and ownership of
 * the table (the migrations' user creates both).
 */
export class GuardLeafAllocMaxId1700000000001 implements MigrationInterface {
  name = 'GuardLeafAllocMaxId1700000000001';

  async up(queryRunner: QueryRunner): Promise<void> {
    if (isPostgres(queryRunner)) return createPostgresGuard(queryRunner);
    if (!isMysqlFamily(queryRunner)) return;
    await queryRunner.query(`DROP TRIGGER IF EXISTS ${MAX_ID_GUARD_TRIGGER}`);
    await queryRunner.query(`
      CREATE TRIGGER ${MAX_ID_GUARD_TRIGGER} BEFORE UPDATE ON leaf_alloc FOR EACH ROW
      IF NEW.max_id < OLD.max_id AND NOT (@leaf_hand_back_from <=> OLD.max_id) THEN
        SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT =
          'leaf_alloc.max_id may not be lowered: IDs below it were issued (${MAX_ID_GUARD_TRIGGER}; docs/operations.md)';
      END IF`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    if (isPostgres(queryRunner)) {
      await queryRunner.query(`DROP TRIGGER IF EXISTS ${MAX_ID_GUARD_TRIGGER} ON leaf_alloc`);
      await queryRunner.query(`DROP FUNCTION IF EXISTS ${MAX_ID_GUARD_TRIGGER}()`);
      return;
    }
    if (!isMysqlFamily(queryRunner)) return;
    await queryRunner.query(`DROP TRIGGER IF EXISTS ${MAX_ID_GUARD_TRIGGER}`);
  }
}

async function createPostgresGuard(queryRunner: QueryRunner): Promise<void> {
  // The mark is compared as text: max_id::text is its exact decimal form.
  await queryRunner.query(`
    CREATE OR REPLACE FUNCTION ${MAX_ID_GUARD_TRIGGER}() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF NEW.max_id < OLD.max_id
         AND current_setting('${HAND_BACK_SETTING}', true) IS DISTINCT FROM OLD.max_id::text THEN
        RAISE EXCEPTION 'leaf_alloc.max_id may not be lowered: IDs below it were issued (${MAX_ID_GUARD_TRIGGER}; docs/operations.md)';
      END IF;
      RETURN NEW;
    END $$`);
  await queryRunner.query(`DROP TRIGGER IF EXISTS ${MAX_ID_GUARD_TRIGGER} ON leaf_alloc`);
  await queryRunner.query(
    `CREATE TRIGGER ${MAX_ID_GUARD_TRIGGER} BEFORE UPDATE ON leaf_alloc FOR EACH ROW EXECUTE FUNCTION ${MAX_ID_GUARD_TRIGGER}()`,
  );
}
