import { networkInterfaces } from 'node:os';
import { LeafConfigurationError, SNOWFLAKE_LAYOUTS, type SnowflakeLayoutSpec } from 'nestjs-leaf';
import { parseDatabaseConfig, type DatabaseConfig } from './database-config';

/** Levels of `LEAF_LOG_LEVEL` (pino's). */
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevelName = (typeof LOG_LEVELS)[number];

/** `LEAF_DB_URL` is read in one place (./database-config.ts), shared with the migrations. */
export { DEFAULT_DB_URL, type DatabaseConfig } from './database-config';

/** The application's configuration, read from the environment (see README). */
export interface AppConfig {
  readonly port: number;
  readonly host: string;
  readonly name: string;
  readonly maxBatchSize: number;
  /** Bearer token of the admin routes; `null` = no admin routes. */
  readonly adminToken: string | null;
  /** `/cache` and `/db`: open to all, behind the admin token, or not served. */
  readonly monitorPages: 'open' | 'token' | 'off';
  /** Structured (JSON) logs: pino level, and whether each request gets an access-log line. */
  readonly log: { readonly level: LogLevelName; readonly accessLog: boolean };
  readonly segment: {
    readonly enabled: boolean;
    readonly database: DatabaseConfig;
    readonly migrate: boolean;
    readonly warmTags: string[];
    readonly readinessRunwayMs: number;
    /** Cap of `count` on the range route (`LEAF_MAX_RANGE`). */
    readonly maxRangeCount: number;
  };
  readonly snowflake: {
    readonly enabled: boolean;
    readonly zkAddress: string | null;
    readonly workerId: number;
    readonly advertise: string;
    readonly stateDir: string;
    readonly startupMaxWaitMs: number;
    readonly localRunwayMs: number;
    readonly zkConnectTimeoutMs: number;
    readonly zkSessionTimeoutMs: number;
    /** `LEAF_SNOWFLAKE_RECLAIM`: never, when-exhausted (default) or always. */
    readonly reclaim: 'never' | 'when-exhausted' | 'always' | undefined;
    readonly reclaimMarginMs: number;
    /**
     * `LEAF_WORKER_ID_FROM_HOSTNAME`: the StatefulSet ordinal of the host name, plus
     * `LEAF_WORKER_ID_OFFSET`; with `LEAF_ZK_ADDRESS` guarded in ZooKeeper too.
     */
    readonly workerIdFromHostname: boolean;
    readonly workerIdOffset: number;
    /** `LEAF_SNOWFLAKE_LAYOUT`: leaf (default) or js-safe. */
    readonly layout: 'leaf' | 'js-safe';
    /** `LEAF_SNOWFLAKE_DATA_CENTER_BITS`: bits of the worker field given to the data-centre ID. */
    readonly dataCenterBits: number;
    readonly dataCenterId: number;
  };
}

/**
 * Every environment variable {@link loadAppConfig} reads (the README's configuration table),
 * for tooling such as the deployment manifests' check (test/deploy.e2e-spec.ts).
 */
export const APP_ENV_VARS = [
  'NODE_ENV',
  'PORT',
  'HOST',
  'LEAF_NAME',
  'LEAF_MAX_BATCH',
  'LEAF_ADMIN_TOKEN',
  'LEAF_MONITOR_PAGES',
  'LEAF_LOG_LEVEL',
  'LEAF_ACCESS_LOG',
  'LEAF_SEGMENT_ENABLED',
  'LEAF_DB_URL',
  'LEAF_DB_MIGRATE',
  'LEAF_SEGMENT_WARM_TAGS',
  'LEAF_SEGMENT_READINESS_RUNWAY_MS',
  'LEAF_MAX_RANGE',
  'LEAF_SNOWFLAKE_ENABLED',
  'LEAF_ZK_ADDRESS',
  'LEAF_WORKER_ID',
  'LEAF_SNOWFLAKE_ADVERTISE',
  'LEAF_STATE_DIR',
  'LEAF_SNOWFLAKE_STARTUP_MAX_WAIT_MS',
  'LEAF_SNOWFLAKE_LOCAL_RUNWAY_MS',
  'LEAF_ZK_CONNECT_TIMEOUT_MS',
  'LEAF_ZK_SESSION_TIMEOUT_MS',
  'LEAF_SNOWFLAKE_RECLAIM',
  'LEAF_SNOWFLAKE_RECLAIM_MARGIN_MS',
  'LEAF_WORKER_ID_FROM_HOSTNAME',
  'LEAF_WORKER_ID_OFFSET',
  'LEAF_SNOWFLAKE_LAYOUT',
  'LEAF_SNOWFLAKE_DATA_CENTER_BITS',
  'LEAF_DATA_CENTER_ID',
] as const;

function firstIPv4(): string {
  for (const addresses of Object.values(networkInterfaces())) {
    for (const address of addresses ?? []) {
      if (address.family === 'IPv4' && !address.internal) return address.address;
    }
  }
  return '127.0.0.1';
}

/**
 * Reads and validates the environment (the README's configuration table).
 * @throws {LeafConfigurationError} listing every invalid variable.
 */
export function loadAppConfig(env: NodeJS.ProcessEnv = process.env): AppConfig {
  const problems: string[] = [];
  const text = (name: string, fallback: string): string => {
    const value = env[name];
    return value === undefined || value.trim() === '' ? fallback : value.trim();
  };
  const bool = (name: string, fallback: boolean): boolean => {
    const value = text(name, String(fallback)).toLowerCase();
    if (['true', '1', 'yes', 'on'].includes(value)) return true;
    if (['false', '0', 'no', 'off'].includes(value)) return false;
    problems.push(`${name} must be true or false (got "${env[name]}")`);
    return fallback;
  };
  const integer = (name: string, fallback: number, min: number, max: number): number => {
    const raw = text(name, String(fallback));
    const value = Number(raw);
    if (!/^\d+$/.test(raw) || value < min || value > max) {
      problems.push(`${name} must be an integer in ${min}..${max} (got "${raw}")`);
      return fallback;
    }
    return value;
  };

  /** One of `values` (the first is the default). */
  const oneOf = <T extends string>(name: string, values: readonly [T, ...T[]]): T => {
    return optionalOneOf(name, values) ?? values[0];
  };
  /** One of `values`, or `undefined` when unset (the library's default applies). */
  const optionalOneOf = <T extends string>(
    name: string,
    values: readonly [T, ...T[]],
  ): T | undefined => {
    const value = text(name, '').toLowerCase();
    if (value === '') return undefined;
    if ((values as readonly string[]).includes(value)) return value as T;
    problems.push(`${name} must be one of ${values.join(', ')} (got "${env[name]}")`);
    return undefined;
  };

  const port = integer('PORT', 8080, 0, 65535);
  const segmentEnabled = bool('LEAF_SEGMENT_ENABLED', true);
  const db = parseDatabaseConfig(env, {
    required: segmentEnabled,
    otherwise: 'LEAF_SEGMENT_ENABLED=false',
  });
  problems.push(...db.problems);
  const database: DatabaseConfig = db.database;
  const warmTags = text('LEAF_SEGMENT_WARM_TAGS', '')
    .split(',')
    .map((tag) => tag.trim())
    .filter((tag) => tag !== '');
  const zkAddress = text('LEAF_ZK_ADDRESS', '') || null;
  const explicitWorkerId = text('LEAF_WORKER_ID', '') !== '';
  const pages = text('LEAF_MONITOR_PAGES', 'open').toLowerCase();
  const monitorPages = pages === 'token' || pages === 'off' ? pages : 'open';
  if (pages !== monitorPages) {
    problems.push(
      `LEAF_MONITOR_PAGES must be open, token or off (got "${env.LEAF_MONITOR_PAGES}")`,
    );
  }
  const logLevel = text('LEAF_LOG_LEVEL', 'info').toLowerCase();
  if (!(LOG_LEVELS as readonly string[]).includes(logLevel)) {
    problems.push(
      `LEAF_LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')} (got "${env.LEAF_LOG_LEVEL}")`,
    );
  }
  const config: AppConfig = {
    port,
    host: text('HOST', '0.0.0.0'),
    name: text('LEAF_NAME', 'leaf'),
    maxBatchSize: integer('LEAF_MAX_BATCH', 1000, 1, 100_000),
    adminToken: text('LEAF_ADMIN_TOKEN', '') || null,
    monitorPages,
    log: {
      level: (LOG_LEVELS as readonly string[]).includes(logLevel)
        ? (logLevel as LogLevelName)
        : 'info',
      accessLog: bool('LEAF_ACCESS_LOG', true),
    },
    segment: {
      enabled: segmentEnabled,
      database,
      migrate: bool('LEAF_DB_MIGRATE', database.type === 'sqlite'),
      warmTags,
      readinessRunwayMs: integer('LEAF_SEGMENT_READINESS_RUNWAY_MS', 30_000, 0, 86_400_000),
      maxRangeCount: integer('LEAF_MAX_RANGE', 1_000_000, 1, 2 ** 31 - 1),
    },
    snowflake: {
      enabled: bool('LEAF_SNOWFLAKE_ENABLED', true),
      zkAddress,
      workerId: integer('LEAF_WORKER_ID', 0, 0, 1023),
      advertise: text('LEAF_SNOWFLAKE_ADVERTISE', `${firstIPv4()}:${port}`),
      stateDir: text('LEAF_STATE_DIR', './data'),
      startupMaxWaitMs: integer('LEAF_SNOWFLAKE_STARTUP_MAX_WAIT_MS', 90_000, 0, 600_000),
      localRunwayMs: integer('LEAF_SNOWFLAKE_LOCAL_RUNWAY_MS', 60_000, 0, 86_400_000),
      zkConnectTimeoutMs: integer('LEAF_ZK_CONNECT_TIMEOUT_MS', 5000, 100, 600_000),
      zkSessionTimeoutMs: integer('LEAF_ZK_SESSION_TIMEOUT_MS', 10_000, 1000, 600_000),
      reclaim: optionalOneOf('LEAF_SNOWFLAKE_RECLAIM', [
        'never',
        'when-exhausted',
        'always',
      ] as const),
      reclaimMarginMs: integer('LEAF_SNOWFLAKE_RECLAIM_MARGIN_MS', 2000, 0, 600_000),
      workerIdFromHostname: bool('LEAF_WORKER_ID_FROM_HOSTNAME', false),
      workerIdOffset: integer('LEAF_WORKER_ID_OFFSET', 0, 0, 1023),
      layout: oneOf('LEAF_SNOWFLAKE_LAYOUT', ['leaf', 'js-safe'] as const),
      dataCenterBits: integer('LEAF_SNOWFLAKE_DATA_CENTER_BITS', 0, 0, 6),
      dataCenterId: integer('LEAF_DATA_CENTER_ID', 0, 0, 63),
    },
  };
  if (config.monitorPages === 'token' && config.adminToken === null) {
    problems.push('LEAF_MONITOR_PAGES=token needs LEAF_ADMIN_TOKEN (the token the pages ask for)');
  }
  if (config.adminToken !== null && config.adminToken.length < 16) {
    problems.push('LEAF_ADMIN_TOKEN must be at least 16 characters (use a random secret)');
  }
  if (config.name.includes('/'))
    problems.push(`LEAF_NAME must not contain "/" (got "${config.name}")`);
  if (text('NODE_ENV', '') === 'production') {
    // The embedded worker ID is for one process on a developer's machine: two replicas on
    // it would share worker 0. (The embedded SQLite file: parseDatabaseConfig.)
    if (
      config.snowflake.enabled &&
      zkAddress === null &&
      !explicitWorkerId &&
      !config.snowflake.workerIdFromHostname
    ) {
      problems.push(
        'NODE_ENV=production: snowflake mode has no worker-ID source (neither LEAF_ZK_ADDRESS nor LEAF_WORKER_ID is set). ' +
          'Set LEAF_ZK_ADDRESS (with LEAF_SNOWFLAKE_ADVERTISE), or opt in to an embedded worker ID with LEAF_WORKER_ID=<0-1023, unique per instance>, or LEAF_SNOWFLAKE_ENABLED=false',
      );
    }
  }
  if (config.snowflake.workerIdFromHostname && explicitWorkerId) {
    problems.push(
      'LEAF_WORKER_ID_FROM_HOSTNAME and LEAF_WORKER_ID are exclusive: the worker ID comes from one source',
    );
  }
  if (zkAddress !== null && explicitWorkerId) {
    problems.push(
      'LEAF_WORKER_ID and LEAF_ZK_ADDRESS are exclusive: with ZooKeeper the worker ID is assigned by it',
    );
  }
  if (problems.length > 0) throw new LeafConfigurationError(problems);
  return config;
}

/**
 * The library's `snowflake.layout` option for the configured layout: the named one, or with
 * `LEAF_SNOWFLAKE_DATA_CENTER_BITS` its worker field split into data-centre and worker bits.
 */
export function snowflakeLayoutOption(
  snowflake: Pick<AppConfig['snowflake'], 'layout' | 'dataCenterBits'>,
): 'leaf' | 'js-safe' | SnowflakeLayoutSpec {
  if (snowflake.dataCenterBits === 0) return snowflake.layout;
  const named = SNOWFLAKE_LAYOUTS[snowflake.layout];
  return {
    ...named,
    dataCenterBits: snowflake.dataCenterBits,
    workerBits: named.workerBits - snowflake.dataCenterBits,
  };
}
