import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { DataSource, type DataSourceOptions } from 'typeorm';
import { buildDataSourceOptions } from '../../src/database/data-source.options';
import { POSTGRES_TEST_URL } from './services';

/**
 * A throw-away database on the test PostgreSQL server (`LEAF_TEST_POSTGRES_URL`, default
 * `postgres://postgres@127.0.0.1:5432/test`, as in ./services.ts), private to one spec file:
 * `leaf_test_<random>`, created from the server's admin database and dropped (`WITH (FORCE)`)
 * by {@link PostgresTestDatabase.drop}, so runs never collide.
 */
export interface PostgresTestDatabase {
  /** `leaf_test_<random>`. */
  readonly name: string;
  /** `postgres://…/leaf_test_<random>`, the value for `LEAF_DB_URL`. */
  readonly url: string;
  /** TypeORM options exactly as the application builds them, with optional overrides. */
  dataSourceOptions(overrides?: Partial<DataSourceOptions>): DataSourceOptions;
  /** Opens a DataSource on this database; with `migrate`, applies the application's migrations. */
  openDataSource(options?: {
    migrate?: boolean;
    overrides?: Partial<DataSourceOptions>;
  }): Promise<DataSource>;
  /** A raw pg session on this database (a separate connection; the caller ends it). */
  connect(): Promise<Client>;
  /** One statement (`$1` placeholders) on a short-lived raw session; returns the rows. */
  query<T = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<T[]>;
  /** `max_id` of `tag` as an exact decimal string, or `null` when the row does not exist. */
  maxId(tag: string): Promise<string | null>;
  /** Drops the database, ending its sessions. Safe to call twice. */
  drop(): Promise<void>;
}

function urlOf(serverUrl: string, name: string): string {
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

async function onAdmin<T>(serverUrl: string, work: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: serverUrl });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/**
 * Creates `leaf_test_<random>` on the test server (or on `serverUrl`, a server's admin
 * database); the spec owns it and must call {@link PostgresTestDatabase.drop} in `afterAll`.
 * With `migrate`, the application's migrations create the schema.
 */
export async function createPostgresTestDatabase(
  options: { migrate?: boolean; serverUrl?: string; name?: string } = {},
): Promise<PostgresTestDatabase> {
  const serverUrl = options.serverUrl ?? POSTGRES_TEST_URL;
  const name = options.name ?? `leaf_test_${randomBytes(6).toString('hex')}`;
  await onAdmin(serverUrl, (admin) => admin.query(`CREATE DATABASE ${name}`));
  const url = urlOf(serverUrl, name);
  const dataSourceOptions = (overrides: Partial<DataSourceOptions> = {}): DataSourceOptions =>
    ({ ...buildDataSourceOptions({ type: 'postgres', url }), ...overrides }) as DataSourceOptions;
  const connect = async (): Promise<Client> => {
    const client = new Client({ connectionString: url });
    await client.connect();
    return client;
  };
  let dropped = false;

  const database: PostgresTestDatabase = {
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
      const client = await connect();
      try {
        return (await client.query(sql, params)).rows as T[];
      } finally {
        await client.end();
      }
    },
    async maxId(tag: string) {
      const rows = await database.query<{ max_id: string }>(
        'SELECT max_id::text AS max_id FROM leaf_alloc WHERE biz_tag = $1',
        [tag],
      );
      return rows[0]?.max_id ?? null;
    },
    async drop() {
      if (dropped) return;
      dropped = true;
      await onAdmin(serverUrl, (admin) =>
        admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`),
      );
    },
  };
  if (options.migrate) await (await database.openDataSource({ migrate: true })).destroy();
  return database;
}
