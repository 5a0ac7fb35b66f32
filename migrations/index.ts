/**
 * The application's migration set: the schema migrations nestjs-leaf ships
 * (`LEAF_MIGRATIONS`, creating `leaf_alloc`), then the application's own, the files
 * `migrations/<timestamp>-<Name>.ts` next to this one (compiled to `dist/migrations/*.js`).
 * All are recorded in one table, `leaf_migrations`, where databases created before this
 * folder existed already record the library's migrations.
 *
 * Add a migration as in any Nest app: `npx typeorm migration:create migrations/AddOrderTag`
 * writes `migrations/<timestamp>-AddOrderTag.ts`, which the pattern below picks up; the
 * TypeORM CLI (migrations/data-source.ts), `npm run migrate` and `LEAF_DB_MIGRATE=true` all
 * run this set (docs/operations.md, "Migrations").
 */
import { join } from 'node:path';
import { LEAF_MIGRATIONS, LEAF_MIGRATIONS_TABLE_NAME } from 'nestjs-leaf';

/**
 * The migrations for a DataSource's `migrations` option: the library's classes, then a
 * pattern matching this folder's `<timestamp>-<Name>` files, `.ts` from source (ts-node,
 * Jest) and `.js` once built (TypeORM skips `.d.ts`).
 */
export const APP_MIGRATIONS = [...LEAF_MIGRATIONS, join(__dirname, '[0-9]*-*.{ts,js}')];

/** `migrationsTableName` of the application's DataSource. */
export const APP_MIGRATIONS_TABLE_NAME = LEAF_MIGRATIONS_TABLE_NAME;
