/**
 * The two database servers of the e2e specs behind one shape, for specs that run on both:
 * a private MariaDB database (./test-database.ts) or a private PostgreSQL one
 * (./postgres-database.ts). Statements given to `query` must be portable (literals, no
 * placeholders).
 */
import type { DataSource, DataSourceOptions } from 'typeorm';
import { createPostgresTestDatabase } from './postgres-database';
import type { TestService } from './services';
import { createTestDatabase } from './test-database';

/** A throw-away database on one of the test servers. */
export interface ServerTestDatabase {
  readonly name: string;
  /** The value for `LEAF_DB_URL` / `LEAF_SEGMENT_HIGH_WATER_DB_URL`. */
  readonly url: string;
  dataSourceOptions(overrides?: Partial<DataSourceOptions>): DataSourceOptions;
  openDataSource(options?: {
    migrate?: boolean;
    overrides?: Partial<DataSourceOptions>;
  }): Promise<DataSource>;
  query<T = Record<string, unknown>>(sql: string): Promise<T[]>;
  maxId(tag: string): Promise<string | null>;
  drop(): Promise<void>;
}

/** The servers, by the service `describeWithServices` waits for. */
export const SERVER_FLAVOURS: ReadonlyArray<{
  readonly service: Extract<TestService, 'mysql' | 'postgres'>;
  readonly label: string;
  create(options?: { migrate?: boolean }): Promise<ServerTestDatabase>;
}> = [
  { service: 'mysql', label: 'MariaDB', create: (options) => createTestDatabase(options) },
  {
    service: 'postgres',
    label: 'PostgreSQL',
    create: (options) => createPostgresTestDatabase(options),
  },
];
