import { randomBytes } from 'node:crypto';
import { createConnection, type Connection, type RowDataPacket } from 'mysql2/promise';
import { DataSource, type DataSourceOptions } from 'typeorm';
import { buildDataSourceOptions } from '../../src/database/data-source.options';

/**
 * Server-level URL (no database) of the MariaDB/MySQL the e2e specs run against: the server of
 * `LEAF_TEST_MYSQL_URL` (default `mysql://root@127.0.0.1:3306/leaf`, as in ./services.ts);
 * its database part is ignored, every spec works in a database of its own.
 */
export const MYSQL_SERVER_URL = serverUrl(
  process.env.LEAF_TEST_MYSQL_URL?.trim() || 'mysql://root@127.0.0.1:3306/leaf',
);

function serverUrl(url: string): string {
  const parsed = new URL(url);
  parsed.pathname = '';
  parsed.search = '';
  return parsed.toString().replace(/\/+$/, '');
}

/** A throw-away database on the test server, private to one spec file. */
export interface TestDatabase {
  /** `leaf_test_<random>`. */
  readonly name: string;
  /** `mysql://…/leaf_test_<random>`, the value for `LEAF_DB_URL`. */
  readonly url: string;
  /**
   * TypeORM options exactly as the application builds them (src/database/data-source.options.ts),
   * with optional overrides such as a larger `poolSize`.
   */
  dataSourceOptions(overrides?: Partial<DataSourceOptions>): DataSourceOptions;
  /**
   * Opens a DataSource on this database. With `migrate`, applies the migrations the way
   * the application does when `LEAF_DB_MIGRATE` is on.
   */
  openDataSource(options?: {
    migrate?: boolean;
    overrides?: Partial<DataSourceOptions>;
  }): Promise<DataSource>;
  /** A raw mysql2 session on this database (a separate connection; the caller ends it). */
  connect(): Promise<Connection>;
  /** One statement on a short-lived raw session; returns the rows. */
  query<T = RowDataPacket>(sql: string, params?: unknown[]): Promise<T[]>;
  /** `max_id` of `tag` as an exact decimal string, or `null` when the row does not exist. */
  maxId(tag: string): Promise<string | null>;
  /** Drops the database. Safe to call twice. */
  drop(): Promise<void>;
}

/**
 * Creates `leaf_test_<random>` on the test server. The spec owns it and must call
 * {@link TestDatabase.drop} in `afterAll`. With `migrate`, the application's migrations
 * create the schema; otherwise it is left to `openDataSource({ migrate: true })` or
 * `LEAF_DB_MIGRATE=true` in the app's environment.
 */
export async function createTestDatabase(
  options: { migrate?: boolean } = {},
): Promise<TestDatabase> {
  const name = `leaf_test_${randomBytes(6).toString('hex')}`;
  const admin = await createConnection(MYSQL_SERVER_URL);
  try {
    await admin.query(`CREATE DATABASE \`${name}\` CHARACTER SET utf8mb4`);
  } finally {
    await admin.end();
  }
  return testDatabaseAt(MYSQL_SERVER_URL, name, options);
}

/**
 * The {@link TestDatabase} helpers for the existing database `name` on the server at
 * `serverUrl` (e.g. a system test's private MariaDB); with `migrate`, applies the
 * application's migrations first.
 */
export async function testDatabaseAt(
  serverUrl: string,
  name: string,
  options: { migrate?: boolean } = {},
): Promise<TestDatabase> {
  const url = `${serverUrl}/${name}`;
  const connect = (): Promise<Connection> =>
    // BIGINT as exact decimal strings, as the application reads them.
    createConnection({ uri: url, supportBigNumbers: true, bigNumberStrings: true });
  const dataSourceOptions = (overrides: Partial<DataSourceOptions> = {}): DataSourceOptions =>
    ({ ...buildDataSourceOptions({ type: 'mysql', url }), ...overrides }) as DataSourceOptions;
  let dropped = false;

  const database: TestDatabase = {
    name,
    url,
    dataSourceOptions,
    async openDataSource({ migrate = false, overrides = {} } = {}) {
      const dataSource = new DataSource(dataSourceOptions(overrides));
      await dataSource.initialize();
      try {
        if (migrate) await dataSource.runMigrations({ transaction: 'each' });
      } catch (error) {
        await dataSource.destroy();
        throw error;
      }
      return dataSource;
    },
    connect,
    async query<T>(sql: string, params: unknown[] = []): Promise<T[]> {
      const connection = await connect();
      try {
        const [rows] = await connection.query(sql, params);
        return rows as T[];
      } finally {
        await connection.end();
      }
    },
    async maxId(tag: string) {
      const rows = await database.query<{ max_id: string }>(
        'SELECT CAST(max_id AS CHAR) AS max_id FROM leaf_alloc WHERE biz_tag = ?',
        [tag],
      );
      return rows[0]?.max_id ?? null;
    },
    async drop() {
      if (dropped) return;
      dropped = true;
      const connection = await createConnection(serverUrl);
      try {
        await connection.query(`DROP DATABASE IF EXISTS \`${name}\``);
      } finally {
        await connection.end();
      }
    },
  };
  if (options.migrate) {
    // The schema from the migrations, applied as the application does.
    await (await database.openDataSource({ migrate: true })).destroy();
  }
  return database;
}
