/**
 * Drizzle and MikroORM transactions as executors of `GaplessNumberService.next`
 * (docs/gapless.md). Structural types only: neither ORM is loaded by the library.
 */
import type { GaplessSqlExecutor } from '../../core/gapless/gapless-store.port';

/** A placeholder of the statements: `?` (MySQL/MariaDB) or `$1` (PostgreSQL). */
const PLACEHOLDER = /\?|\$\d+/g;

/** What {@link drizzleGaplessExecutor} uses of Drizzle's `sql` tag (`import { sql } from 'drizzle-orm'`). */
export interface DrizzleSqlTag {
  raw(text: string): unknown;
  join(chunks: unknown[]): unknown;
  param(value: unknown): unknown;
}

/** A Drizzle transaction (`db.transaction(async (tx) => …)`). */
export interface DrizzleTransaction {
  execute(query: never): Promise<unknown>;
}

/**
 * A Drizzle transaction as an executor, given Drizzle's `sql` tag: each statement becomes
 * one `sql` object with its values bound as parameters. Rows come back as the driver gives
 * them (`{ rows }` of node-postgres, `[rows, fields]` of mysql2) and are unwrapped.
 */
export function drizzleGaplessExecutor(
  tx: DrizzleTransaction,
  sql: DrizzleSqlTag,
): GaplessSqlExecutor {
  return {
    query: async (text, parameters = []) => {
      const parts = text.split(PLACEHOLDER);
      const chunks = parts.flatMap((part, i) =>
        i < parameters.length ? [sql.raw(part), sql.param(parameters[i])] : [sql.raw(part)],
      );
      const result = (await tx.execute(sql.join(chunks) as never)) as unknown;
      if (Array.isArray(result)) return Array.isArray(result[0]) ? result[0] : result;
      return (result as { rows?: unknown[] }).rows ?? result;
    },
  };
}

/** A MikroORM SQL entity manager inside `em.transactional(async (em) => …)`. */
export interface MikroOrmTransactionManager {
  getConnection(): {
    execute(sql: string, params?: unknown[], method?: 'all', ctx?: unknown): Promise<unknown>;
  };
  getTransactionContext(): unknown;
}

/**
 * A MikroORM transaction as an executor: `execute` on its connection within its transaction
 * context, with the `?` placeholders knex takes on every database.
 */
export function mikroOrmGaplessExecutor(em: MikroOrmTransactionManager): GaplessSqlExecutor {
  return {
    query: (text, parameters = []) =>
      em
        .getConnection()
        .execute(text.replace(PLACEHOLDER, '?'), parameters, 'all', em.getTransactionContext()),
  };
}
