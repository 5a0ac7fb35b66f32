import { LeafConfigurationError } from 'nestjs-leaf';
import { redactSecrets } from 'nestjs-leaf/errors';

/** Where segment mode keeps `leaf_alloc`. */
export type DatabaseConfig =
  | { readonly type: 'sqlite'; readonly path: string }
  | { readonly type: 'mysql' | 'postgres'; readonly url: string };

/** The embedded default: a SQLite file next to the local state (development only). */
export const DEFAULT_DB_URL = 'sqlite:./data/leaf.sqlite';

/** The environment variables {@link parseDatabaseConfig} reads. */
export const DATABASE_ENV_VARS = [
  'NODE_ENV',
  'LEAF_DB_URL',
  'LEAF_DB_URLS',
  'LEAF_SEGMENT_HIGH_WATER_DB_URL',
  'LEAF_REGION_DB_URL',
] as const;

/** What {@link parseDatabaseConfig} found: the database, and every problem with it. */
export interface ParsedDatabaseConfig {
  /** The database; with `LEAF_DB_URLS`, the first of them. */
  readonly database: DatabaseConfig;
  /**
   * `LEAF_DB_URLS`: several MySQL/MariaDB or PostgreSQL databases serving the same tags
   * (docs/design.md, "Several databases per tag"); `null` when it is not set.
   */
  readonly urls: readonly string[] | null;
  /**
   * `LEAF_SEGMENT_HIGH_WATER_DB_URL`: the high-water marks' own database (docs/design.md,
   * "High-water mark"); `null` when it is not set.
   */
  readonly highWater: DatabaseConfig | null;
  /** `LEAF_REGION_DB_URL`: the region registry (docs/operations.md, "Regions"); `null` when not set. */
  readonly region: DatabaseConfig | null;
  /** Empty when the settings are valid. */
  readonly problems: readonly string[];
}

/** How {@link parseDatabaseConfig} applies the production rule. */
export interface DatabaseConfigOptions {
  /**
   * Whether this process needs the database. When it does, `NODE_ENV=production` refuses
   * the embedded SQLite default: `LEAF_DB_URL` must be set.
   * @default true
   */
  readonly required?: boolean;
  /** A further way out named in the production problem, e.g. `LEAF_SEGMENT_ENABLED=false`. */
  readonly otherwise?: string;
}

/** A database server's URL: `mysql://`, `mariadb://`, `postgres://` or `postgresql://`, with a database. */
const SERVER_URL = /^(mysql|mariadb|postgres|postgresql):\/\/[^/]+\/[^/?]+/;

/**
 * The database of a server URL matching {@link SERVER_URL}: `mariadb://` is read as
 * `mysql://`, `postgresql://` as `postgres://` (pg takes both).
 */
export function serverDatabase(url: string): DatabaseConfig {
  if (/^postgres(ql)?:/.test(url)) return { type: 'postgres', url };
  return { type: 'mysql', url: url.replace(/^mariadb:/, 'mysql:') };
}

/** `env[name]` trimmed; `undefined` when unset or blank. */
function setting(env: NodeJS.ProcessEnv, name: (typeof DATABASE_ENV_VARS)[number]) {
  const value = env[name]?.trim();
  return value === undefined || value === '' ? undefined : value;
}

/**
 * The database settings, `LEAF_DB_URL` (and `NODE_ENV`), and nothing else: the one reading
 * of them for the application (src/config/app-config.ts), the migration command
 * (src/database/migrate.ts) and the TypeORM CLI's data source (migrations/data-source.ts).
 * `mariadb://` is read as `mysql://`; `postgres://` and `postgresql://` are PostgreSQL. Unset, the embedded SQLite file {@link DEFAULT_DB_URL};
 * with `NODE_ENV=production` that default is refused (docs/operations.md, "The database").
 */
export function parseDatabaseConfig(
  env: NodeJS.ProcessEnv = process.env,
  options: DatabaseConfigOptions = {},
): ParsedDatabaseConfig {
  const problems: string[] = [];
  const several = setting(env, 'LEAF_DB_URLS');
  const single = setting(env, 'LEAF_DB_URL');
  if (several !== undefined && single !== undefined) {
    problems.push(
      'LEAF_DB_URL and LEAF_DB_URLS are exclusive: set LEAF_DB_URL for one database, or LEAF_DB_URLS for several serving the same tags (docs/operations.md, "Several databases per tag")',
    );
  }
  const urls = several === undefined ? null : several.split(',').map((part) => part.trim());
  if (urls !== null) {
    const bad = urls.filter((u) => !SERVER_URL.test(u));
    if (bad.length > 0) {
      problems.push(
        `LEAF_DB_URLS must be a comma-separated list of mysql://user:pass@host:3306/db or postgres://user:pass@host:5432/db URLs (got ${bad.map((u) => `"${redactSecrets(u)}"`).join(', ')})`,
      );
    }
    if (new Set(urls).size !== urls.length) problems.push('LEAF_DB_URLS lists a database twice');
  }
  const configured = urls?.[0] ?? single;
  const url = configured ?? DEFAULT_DB_URL;
  let database: DatabaseConfig = { type: 'sqlite', path: DEFAULT_DB_URL.slice('sqlite:'.length) };
  if (url.startsWith('sqlite:')) {
    const path = url.slice('sqlite:'.length);
    if (path === '')
      problems.push(`LEAF_DB_URL "sqlite:" needs a file path, e.g. ${DEFAULT_DB_URL}`);
    database = { type: 'sqlite', path };
  } else if (SERVER_URL.test(url)) {
    database = serverDatabase(url);
  } else if (urls === null) {
    problems.push(
      `LEAF_DB_URL must be mysql://user:pass@host:3306/db, postgres://user:pass@host:5432/db or sqlite:<file> (got "${redactSecrets(url)}")`,
    );
  }
  if (
    (options.required ?? true) &&
    configured === undefined &&
    setting(env, 'NODE_ENV') === 'production'
  ) {
    // The embedded file is for one process on a developer's machine: two replicas on it
    // would each allocate from their own SQLite file.
    problems.push(
      'NODE_ENV=production: segment mode would use the embedded SQLite file (LEAF_DB_URL is not set). ' +
        'Set LEAF_DB_URL=mysql://user:pass@host:3306/db (or postgres://…), or opt in to SQLite explicitly with LEAF_DB_URL=sqlite:<file> (one instance only)' +
        (options.otherwise === undefined ? '' : `, or ${options.otherwise}`),
    );
  }
  const allocation = configured === undefined ? [] : (urls ?? [configured]);
  const highWater = ownDatabase(
    env,
    'LEAF_SEGMENT_HIGH_WATER_DB_URL',
    allocation,
    'the high-water marks must live outside it, or a restore of it takes them back too (docs/design.md, "High-water mark")',
  );
  const region = ownDatabase(
    env,
    'LEAF_REGION_DB_URL',
    allocation,
    'the region registry is shared by every region and must not go back with one region’s database (docs/operations.md, "Regions")',
  );
  problems.push(...highWater.problems, ...region.problems);
  return {
    database,
    urls: urls === null ? null : urls.map((u) => u.replace(/^mariadb:/, 'mysql:')),
    highWater: highWater.database,
    region: region.database,
    problems,
  };
}

/**
 * `host:port/database` of a server URL, normalised: host in lower case, loopback names as
 * one, the scheme's default port. Two URLs with the same key reach the same database.
 */
export function databaseKey(url: string): string {
  const parsed = new URL(url);
  const host = parsed.hostname.toLowerCase().replace(/^\[|\]$/g, '');
  const loopback = ['localhost', '127.0.0.1', '::1', '0.0.0.0'].includes(host);
  const port = parsed.port || (/^postgres/.test(parsed.protocol) ? '5432' : '3306');
  return `${loopback ? 'loopback' : host}:${port}/${decodeURIComponent(parsed.pathname.slice(1))}`;
}

/**
 * A database of its own named by `name` (`LEAF_SEGMENT_HIGH_WATER_DB_URL`, `LEAF_REGION_DB_URL`),
 * refused when it names one of the allocation databases (`allocation`: LEAF_DB_URL or each of
 * LEAF_DB_URLS), for the reason `why`.
 */
function ownDatabase(
  env: NodeJS.ProcessEnv,
  name: 'LEAF_SEGMENT_HIGH_WATER_DB_URL' | 'LEAF_REGION_DB_URL',
  allocation: readonly string[],
  why: string,
): { database: DatabaseConfig | null; problems: string[] } {
  const url = setting(env, name);
  if (url === undefined) return { database: null, problems: [] };
  if (!SERVER_URL.test(url)) {
    return {
      database: null,
      problems: [
        `${name} must be mysql://user:pass@host:3306/db or postgres://user:pass@host:5432/db`,
      ],
    };
  }
  const same = allocation.find((a) => SERVER_URL.test(a) && databaseKey(a) === databaseKey(url));
  const problems =
    same === undefined
      ? []
      : [
          `${name} names the allocation database of ${setting(env, 'LEAF_DB_URLS') ? 'LEAF_DB_URLS' : 'LEAF_DB_URL'} (${databaseKey(url)}): ${why}`,
        ];
  return { database: serverDatabase(url), problems };
}

/**
 * {@link parseDatabaseConfig}, throwing on any problem.
 * @throws {LeafConfigurationError} listing every problem with the database settings.
 */
export function loadDatabaseConfig(env: NodeJS.ProcessEnv = process.env): DatabaseConfig {
  const parsed = parseDatabaseConfig(env);
  const { database, urls } = parsed;
  const problems = [...parsed.problems];
  // The tools of one database (the migrations, the TypeORM CLI) must not pick one of several.
  if (urls !== null && problems.length === 0) {
    problems.push(
      'LEAF_DB_URLS names several databases: migrate each on its own, with LEAF_DB_URL=<its URL> and LEAF_DB_URLS unset (docs/operations.md, "Several databases per tag")',
    );
  }
  if (problems.length > 0) throw new LeafConfigurationError(problems);
  return database;
}
