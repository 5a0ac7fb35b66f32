import type { MigrationInterface, QueryRunner } from 'typeorm';
import { refuseWhileRows } from './migration-sql';

/**
 * The residue class of a row, for several databases serving one tag (docs/design.md,
 * "Several databases per tag"; Tinyid's `delta`/`remainder`): a range granted by the row is
 * served only as its IDs `x ≡ id_residue (mod id_modulus)`. The defaults `(1, 0)` are every
 * ID, so existing rows keep their meaning, and a single database never reads the columns.
 * The Java Leaf and older versions ignore them (they select their columns by name).
 */
export class AddLeafAllocResidueClass1700000000002 implements MigrationInterface {
  name = 'AddLeafAllocResidueClass1700000000002';

  async up(queryRunner: QueryRunner): Promise<void> {
    for (const [column, initial] of COLUMNS) {
      if (await queryRunner.hasColumn('leaf_alloc', column)) continue;
      await queryRunner.query(
        `ALTER TABLE leaf_alloc ADD COLUMN ${column} int NOT NULL DEFAULT ${initial}`,
      );
    }
  }

  /**
   * Drops the columns only while every row has the class of one database: dropping a class
   * another database relies on would let this one serve the other's IDs.
   */
  async down(queryRunner: QueryRunner): Promise<void> {
    await refuseWhileRows(
      queryRunner,
      'leaf_alloc',
      'Refusing to drop id_modulus/id_residue: some rows serve one residue class of several databases (docs/operations.md)',
      'id_modulus <> 1 OR id_residue <> 0',
    );
    for (const [column] of [...COLUMNS].reverse()) {
      await queryRunner.query(`ALTER TABLE leaf_alloc DROP COLUMN ${column}`);
    }
  }
}

const COLUMNS: ReadonlyArray<readonly [string, number]> = [
  ['id_modulus', 1],
  ['id_residue', 0],
];
