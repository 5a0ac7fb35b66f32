/**
 * The Leaf side of the ORM specs (test/orm-*.e2e-spec.ts): a throw-away database on the test
 * PostgreSQL or MariaDB with Leaf's migrations and the given `leaf_alloc` tags, and a real
 * `LeafModule` in a Nest testing module on it (segment on the same database, embedded
 * snowflake with a fixed worker ID) — what an application using that ORM runs beside it.
 *
 * ```ts
 * const leaf = await startOrmLeaf('postgres', { tags: { orders: 100 }, workerId: 0 });
 * sources.segments = leaf.segments; // ... leaf.db.url for the ORM's own connection
 * await leaf.close();
 * ```
 */
import { ScheduleModule } from '@nestjs/schedule';
import { Test } from '@nestjs/testing';
import { LeafModule, SegmentService, SnowflakeService } from 'nestjs-leaf';
import type { DataSource } from 'typeorm';
import { tempDir } from './app';
import { createPostgresTestDatabase } from './postgres-database';
import { createTestDatabase } from './test-database';

/** The databases the ORM specs run on (the names of ./services.ts). */
export type OrmDatabaseKind = 'postgres' | 'mysql';

/** The part of the test databases' helpers the ORM specs use. */
export interface OrmTestDatabase {
  readonly kind: OrmDatabaseKind;
  /** The URL for the ORM's own connection. */
  readonly url: string;
  /** One statement on a short-lived raw session (`$1` on PostgreSQL, `?` on MariaDB). */
  query<T = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<T[]>;
}

/** A running Leaf beside the ORM under test. */
export interface OrmLeaf {
  readonly db: OrmTestDatabase;
  readonly segments: SegmentService;
  readonly snowflake: SnowflakeService;
  /** Closes the module and its DataSource, drops the database, removes the state directory. */
  close(): Promise<void>;
}

/**
 * Creates the database (Leaf's migrations applied), adds each tag of `tags` (tag → step,
 * `max_id` 1), and starts `LeafModule` on it with `snowflake: { workerId }`.
 */
export async function startOrmLeaf(
  kind: OrmDatabaseKind,
  options: { tags: Record<string, number>; workerId: number },
): Promise<OrmLeaf> {
  const database =
    kind === 'postgres'
      ? await createPostgresTestDatabase({ migrate: true })
      : await createTestDatabase({ migrate: true });
  const state = tempDir(`leaf-orm-${kind}`);
  let dataSource: DataSource | undefined;
  const close = async (app?: { close(): Promise<void> }) => {
    await app?.close();
    await dataSource?.destroy();
    await database.drop();
    state.remove();
  };
  try {
    const placeholder = kind === 'postgres' ? '$1' : '?';
    for (const [tag, step] of Object.entries(options.tags))
      await database.query(
        `INSERT INTO leaf_alloc (biz_tag, max_id, step) VALUES (${placeholder}, 1, ${step})`,
        [tag],
      );
    dataSource = await database.openDataSource();
    const app = await Test.createTestingModule({
      imports: [
        ScheduleModule.forRoot(),
        LeafModule.forRoot({
          segment: { dataSource },
          snowflake: { workerId: options.workerId, stateDir: state.path },
        }),
      ],
    }).compile();
    app.useLogger(false);
    await app.init();
    return {
      db: {
        kind,
        url: database.url,
        query: <T>(sql: string, params?: unknown[]) => database.query<T>(sql, params),
      },
      segments: app.get(SegmentService),
      snowflake: app.get(SnowflakeService),
      close: () => close(app),
    };
  } catch (error) {
    await close();
    throw error;
  }
}

/**
 * `table.id` as the database declares it: its type, its default, and whether it is an
 * identity (PostgreSQL: `is_identity`, `'NO'` when not) or auto-increment (MariaDB: `EXTRA`,
 * `''` when not). A Leaf key is `bigint`, `null`, and not one.
 */
export async function keyColumn(
  db: OrmTestDatabase,
  table: string,
): Promise<{ data_type: unknown; column_default: unknown; extra: unknown }> {
  const sql =
    db.kind === 'postgres'
      ? `SELECT data_type, column_default, is_identity AS extra FROM information_schema.columns WHERE table_name = $1 AND column_name = 'id'`
      : `SELECT DATA_TYPE AS data_type, COLUMN_DEFAULT AS column_default, EXTRA AS extra FROM information_schema.columns WHERE table_schema = DATABASE() AND table_name = ? AND column_name = 'id'`;
  const [column] = await db.query<{ data_type: unknown; column_default: unknown; extra: unknown }>(
    sql,
    [table],
  );
  return column;
}
