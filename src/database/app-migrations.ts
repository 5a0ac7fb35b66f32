/**
 * The application's migration set: the schema migrations nestjs-leaf ships
 * (`LEAF_MIGRATIONS`, creating `leaf_alloc`), then the application's own, the files
 * `migrations/<timestamp>-<Name>.ts` at the project root (compiled to `dist/migrations/*.js`).
 * All are recorded in one table, `leaf_migrations`, where databases created before that
 * folder existed already record the library's migrations.
 *
 * Add a migration as in any Nest app: `npx typeorm migration:create migrations/AddOrderTag`
 * writes `migrations/<timestamp>-AddOrderTag.ts`, which the pattern below picks up; the
 * TypeORM CLI (migrations/data-source.ts), `npm run migrate` and `LEAF_DB_MIGRATE=true` all
 * run this set (docs/operations.md, "Migrations"). The set lives here, not in migrations/,
 * so that the dependency runs one way: migrations/data-source.ts uses the application's
 * options, the application never imports migrations/.
 */
import { join } from 'node:path';
import { LEAF_MIGRATIONS, LEAF_MIGRATIONS_TABLE_NAME } from 'nestjs-leaf/storage/typeorm';

/**
 * The migrations for a DataSource's `migrations` option: the library's classes, then a
 * pattern matching migrations/'s `<timestamp>-<Name>` files, `.ts` from source (ts-node,
 * Jest) and `.js` once built (TypeORM skips `.d.ts`). From src/database/ and from
 * dist/src/database/ alike, migrations/ is two folders up.
 */
export const APP_MIGRATIONS = [
  ...LEAF_MIGRATIONS,
  join(__dirname, '..', '..', 'migrations', '[0-9]*-*.{ts,js}'),
];

/** `migrationsTableName` of the application's DataSource. */
export const APP_MIGRATIONS_TABLE_NAME = LEAF_MIGRATIONS_TABLE_NAME;
