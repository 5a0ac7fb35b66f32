import { CreateLeafAlloc1700000000000 } from './1700000000000-CreateLeafAlloc';
import { GuardLeafAllocMaxId1700000000001 } from './1700000000001-GuardLeafAllocMaxId';
import { AddLeafAllocResidueClass1700000000002 } from './1700000000002-AddLeafAllocResidueClass';
import { CreateLeafSequenceIssuer1700000000003 } from './1700000000003-CreateLeafSequenceIssuer';

/**
 * Every migration of the `leaf_alloc` schema (and of `leaf_sequence_issuer`, the database-held sequence election), in order. Give them to a TypeORM DataSource
 * (`migrations: LEAF_MIGRATIONS`) and run them with `migrationsRun: true`,
 * `dataSource.runMigrations()` or the TypeORM CLI. They work on MySQL/MariaDB, PostgreSQL and SQLite.
 */
export const LEAF_MIGRATIONS = [
  CreateLeafAlloc1700000000000,
  GuardLeafAllocMaxId1700000000001,
  AddLeafAllocResidueClass1700000000002,
  CreateLeafSequenceIssuer1700000000003,
];

/**
 * The migrations table name to use for a DataSource that runs {@link LEAF_MIGRATIONS}
 * (`migrationsTableName`): the library's own, so its records never mix with the
 * application's (TypeORM's default is `migrations`).
 */
export const LEAF_MIGRATIONS_TABLE_NAME = 'leaf_migrations';

export {
  CreateLeafAlloc1700000000000,
  GuardLeafAllocMaxId1700000000001,
  AddLeafAllocResidueClass1700000000002,
  CreateLeafSequenceIssuer1700000000003,
};
