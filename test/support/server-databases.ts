/**
 * The two database servers of the e2e specs behind one shape, for specs that run on both:
 * a private MariaDB database (./test-database.ts) or a private PostgreSQL one
 * (./postgres-database.ts). Statements given to `query` must be portable (literals, no
 * placeholders).
 */
import { createPostgresTestDatabase } from './postgres-database';
import type { TestService } from './services';
import { createTestDatabase, type TestDatabase } from './test-database';

/**
 * A throw-away database on one of the test servers: what ./test-database.ts and
 * ./postgres-database.ts have in common (`query` without placeholders).
 */
export type ServerTestDatabase = Pick<
  TestDatabase,
  'name' | 'url' | 'dataSourceOptions' | 'openDataSource' | 'maxId' | 'drop'
> & { query<T = Record<string, unknown>>(sql: string): Promise<T[]> };

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
