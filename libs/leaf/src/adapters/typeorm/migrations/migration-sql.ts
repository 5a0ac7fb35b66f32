import type { QueryRunner } from 'typeorm';

/**
 * The steps Leaf's migrations share: which database they run on, MySQL's table options, a
 * CREATE TABLE that adopts an existing table, and a guarded drop. Not part of the package's API.
 */

/** The connection's driver type, as a string: TypeORM 1 has no 'sqlite' (node-sqlite3) driver type, 0.3 has both. */
export function databaseType(queryRunner: QueryRunner): string {
  return queryRunner.connection.options.type;
}

/** True on MySQL and MariaDB (TypeORM's `mysql` and `mariadb` drivers). */
export function isMysqlFamily(queryRunner: QueryRunner): boolean {
  return ['mysql', 'mariadb'].includes(databaseType(queryRunner));
}

/** True on PostgreSQL. */
export function isPostgres(queryRunner: QueryRunner): boolean {
  return databaseType(queryRunner) === 'postgres';
}

/** The table options of Leaf's MySQL/MariaDB tables, after `CREATE TABLE … (…)`. */
export const MYSQL_TABLE_OPTIONS = ' ENGINE=InnoDB DEFAULT CHARSET=utf8mb4';

/** {@link MYSQL_TABLE_OPTIONS} on MySQL/MariaDB, nothing elsewhere. */
export function tableOptions(queryRunner: QueryRunner): string {
  return isMysqlFamily(queryRunner) ? MYSQL_TABLE_OPTIONS : '';
}

/**
 * Runs `create` (the table's CREATE TABLE), then its `indexes`, unless `table` exists: an
 * existing table (Leaf's own, or one recorded under another migrations table) is adopted as it is.
 */
export async function createTableUnlessExists(
  queryRunner: QueryRunner,
  table: string,
  create: string,
  ...indexes: string[]
): Promise<void> {
  if (await queryRunner.hasTable(table)) return;
  for (const statement of [create, ...indexes]) await queryRunner.query(statement);
}

/**
 * Throws `message` if `table` has a row (matching `where`, if given): the guard of a `down()`
 * whose drop would lose what keeps IDs or numbers from repeating.
 */
export async function refuseWhileRows(
  queryRunner: QueryRunner,
  table: string,
  message: string,
  where?: string,
): Promise<void> {
  const [row] = (await queryRunner.query(
    `SELECT COUNT(*) AS n FROM ${table}${where === undefined ? '' : ` WHERE ${where}`}`,
  )) as Array<{ n: number | string }>;
  if (Number(row!.n) > 0) throw new Error(message);
}

/** Drops `table` unless it has a row (matching `where`, if given): {@link refuseWhileRows}. */
export async function dropTableUnlessRows(
  queryRunner: QueryRunner,
  table: string,
  message: string,
  where?: string,
): Promise<void> {
  await refuseWhileRows(queryRunner, table, message, where);
  await queryRunner.query(`DROP TABLE ${table}`);
}
