import { readFileSync } from 'node:fs';
import { networkInterfaces } from 'node:os';
import { LeafConfigurationError } from 'nestjs-leaf';
import { redactSecrets } from 'nestjs-leaf/errors';
import {
  coordinationPlan,
  sequenceDatabaseProblem,
  type Coordination,
  type LeafOptionPath,
  type RuleValue,
} from 'nestjs-leaf/server';
import { APP_ENV, ruleOf, secretValues, type LogLevelName } from './app-env';
import { COORDINATION_PROBLEMS } from './coordination';
import { parseDatabaseConfig, type DatabaseConfig } from './database-config';
import { parseEnvValue } from './env-value';
import { loadClientDefinitions, type ClientDefinition } from '../clients/client-definitions';
import { readOpaqueKeys } from './opaque-config';
import { readInternalListener, readSecretList, type InternalListenerConfig } from './peer-config';
import { readRegion } from './region-config';

export type { InternalListenerConfig } from './peer-config';

/** The library's options the environment set, by option path; absent = the library's default. */
export type LeafOptionValues = { readonly [P in LeafOptionPath]?: RuleValue<P> };

/** The application's configuration, read from the environment (docs/configuration.md). */
export interface AppConfig {
  readonly port: number;
  readonly host: string;
  /** `LEAF_TLS_CERT_FILE` and `LEAF_TLS_KEY_FILE`: HTTPS on `port`; `null`: plain HTTP. */
  readonly tls: { readonly certFile: string; readonly keyFile: string } | null;
  /** Bearer token of the admin routes; `null` = no admin routes. */
  readonly adminToken: string | null;
  /** `/cache` and `/db`: open to all, behind the admin token, or not served. */
  readonly monitorPages: 'open' | 'token' | 'off';
  /** `LEAF_CLIENT_TOKENS` (or its file): the clients of the ID routes; `null` = open. */
  readonly clientTokens: readonly ClientDefinition[] | null;
  /**
   * Structured (JSON) logs: pino level, whether each request gets an access-log line, and the
   * secret values set in the environment, hidden wherever they would appear in a line.
   */
  readonly log: {
    readonly level: LogLevelName;
    readonly accessLog: boolean;
    readonly secrets: readonly string[];
  };
  readonly segment: {
    readonly enabled: boolean;
    readonly database: DatabaseConfig;
    /** `LEAF_DB_URLS`: several databases serving the same tags (`null`: one, `database`). */
    readonly urls: readonly string[] | null;
    /** `LEAF_SEGMENT_HIGH_WATER_DB_URL`: the marks' own database (`null`: ZooKeeper or none). */
    readonly highWater: DatabaseConfig | null;
    readonly migrate: boolean;
  };
  readonly snowflake: {
    readonly enabled: boolean;
    /**
     * Where the worker ID comes from. `database`: leased from `leaf_worker_lease`;
     * `embedded-default` is the development default, worker 0.
     */
    readonly workerSource: 'zookeeper' | 'database' | 'hostname' | 'explicit' | 'embedded-default';
    /** `LEAF_SNOWFLAKE_DATA_CENTER_BITS`: bits of the worker field given to the data-centre ID. */
    readonly dataCenterBits: number;
    /** `LEAF_REGION_DB_URL`: the region registry (`null`: none). */
    readonly region: DatabaseConfig | null;
  };
  /** What is allowed but risky, logged at start (e.g. a data-centre ID by hand in production). */
  readonly warnings: readonly string[];
  readonly sequence: { readonly enabled: boolean };
  /** `LEAF_GAPLESS`: gapless series in the database of `segment` (docs/gapless.md). */
  readonly gapless: { readonly enabled: boolean };
  /**
   * `LEAF_INTERNAL_PORT`: the internal routes of sequence mode on a TLS listener of their own
   * that requires a client certificate from `tls.ca`; `null`: on `PORT` (sequence mode off too).
   */
  readonly internal: InternalListenerConfig | null;
  /** `LEAF_COORDINATION` with its default (the library's `coordinationPlan`); `null`: none. */
  readonly coordination: Coordination | null;
  /**
   * The library's options as the operator set them; {@link toLeafModuleOptions} passes on
   * exactly these (plus {@link APP_DEFAULT_DIFFERENCES}).
   */
  readonly options: LeafOptionValues;
}

/**
 * The host other instances reach this one at: `HOST` when it names one address (the app
 * listens there only), else the first non-internal IPv4 address. IPv6 in brackets.
 */
function advertisedHost(host: string): string {
  if (host === '0.0.0.0' || host === '::' || host === '') return firstIPv4();
  return host.includes(':') ? `[${host}]` : host;
}

function firstIPv4(): string {
  for (const addresses of Object.values(networkInterfaces())) {
    for (const address of addresses ?? []) {
      if (address.family === 'IPv4' && !address.internal) return address.address;
    }
  }
  return '127.0.0.1';
}

/**
 * Reads and validates the environment (docs/configuration.md): a variable that is not set
 * (or blank) is "not set", so the library's default applies; one that is set is checked
 * against its rule, the library's own for the library's options.
 * @throws {LeafConfigurationError} listing every invalid variable.
 */
export function loadAppConfig(env: NodeJS.ProcessEnv = process.env): AppConfig {
  const problems: string[] = [];
  const set = new Map<string, unknown>();
  // The library's options the environment set, by option path.
  const given: { [P in LeafOptionPath]?: unknown } = {};
  for (const variable of APP_ENV) {
    const raw = env[variable.name]?.trim();
    if (raw === undefined || raw === '') continue;
    const parsed = parseEnvValue(ruleOf(variable), raw);
    if ('problem' in parsed) {
      const option = 'option' in variable ? ` (option ${variable.option})` : '';
      const got = 'secret' in variable && variable.secret ? '' : ` (got "${redactSecrets(raw)}")`;
      problems.push(`${variable.name} must be ${parsed.problem}${option}${got}`);
    } else {
      set.set(variable.name, parsed.value);
      if ('option' in variable) given[variable.option] = parsed.value;
    }
  }
  /** The value set for `name`, or the application's own default of an app variable. */
  const get = <T>(name: string): T | undefined => {
    if (set.has(name)) return set.get(name) as T;
    const variable = APP_ENV.find((v) => v.name === name);
    return variable && 'rule' in variable && variable.rule.default !== null
      ? (variable.rule.default as T)
      : undefined;
  };

  const port = get<number>('PORT')!;
  const host = get<string>('HOST')!;
  const production = get<string>('NODE_ENV') === 'production';
  const snowflakeEnabled = get<boolean>('LEAF_SNOWFLAKE_ENABLED')!;
  const dataCenterBits = get<number>('LEAF_SNOWFLAKE_DATA_CENTER_BITS')!;
  const workerIdFromHostname = get<boolean>('LEAF_WORKER_ID_FROM_HOSTNAME')!;
  const segmentEnabled = get<boolean>('LEAF_SEGMENT_ENABLED')!;
  const sequenceEnabled = get<boolean>('LEAF_SEQUENCE_ENABLED')!;
  // Segment and sequence mode take their ranges from LEAF_DB_URL (read where the migrations
  // read it too, with the production rule for it): the database is open with either on.
  const databaseOpen = segmentEnabled || sequenceEnabled;
  const parsedDatabase = parseDatabaseConfig(env, {
    required: databaseOpen,
    otherwise: `LEAF_SEGMENT_ENABLED=false${sequenceEnabled ? ' and LEAF_SEQUENCE_ENABLED=false' : ''}`,
  });
  problems.push(...parsedDatabase.problems);
  const database = parsedDatabase.database;

  const zookeeper = set.get('LEAF_ZK_ADDRESS') as string | undefined;
  const sequenceZookeeper = sequenceEnabled ? get<string>('LEAF_SEQUENCE_ZK') : undefined;
  // The library decides the backend, the worker-ID source and which options then apply.
  const plan = coordinationPlan({
    chosen: get<Coordination>('LEAF_COORDINATION'),
    zookeeper,
    sequenceZookeeper,
    sequence: sequenceEnabled,
    database: !databaseOpen
      ? 'none'
      : set.has('LEAF_DB_URLS')
        ? 'several'
        : database.type === 'sqlite'
          ? 'embedded'
          : 'server',
    workerId: workerIdFromHostname ? 'hostname' : set.has('LEAF_WORKER_ID') ? 'explicit' : null,
    options: given,
  });
  problems.push(...plan.problems.map((problem) => COORDINATION_PROBLEMS[problem]));
  const { coordination, workerSource, options } = plan;
  if (plan.advertisesWorker && !set.has('LEAF_SNOWFLAKE_ADVERTISE'))
    options['snowflake.advertise'] = `${firstIPv4()}:${port}`;

  // Safe by default: ZooKeeper configured for the app (the snowflake one, else the sequence
  // election's) fences MySQL/MariaDB and PostgreSQL allocations too; a restored leaf_alloc is then repaired
  // instead of re-served, in segment and sequence mode alike.
  const highWaterSetting = get<string>('LEAF_SEGMENT_HIGH_WATER_ZK');
  // LEAF_SEGMENT_HIGH_WATER_DB_URL (read with the other database settings) puts the marks
  // in a database of their own instead.
  const highWaterDatabase = parsedDatabase.highWater;
  if (highWaterDatabase && highWaterSetting !== undefined) {
    problems.push(
      'LEAF_SEGMENT_HIGH_WATER_DB_URL and LEAF_SEGMENT_HIGH_WATER_ZK are exclusive: the high-water mark lives in one place',
    );
  }
  if (highWaterDatabase && database.type === 'sqlite' && segmentEnabled) {
    problems.push(
      'LEAF_SEGMENT_HIGH_WATER_DB_URL needs a database server in LEAF_DB_URL: the mark fences MySQL/MariaDB and PostgreSQL allocations, SQLite serves one process',
    );
  }
  const highWater =
    highWaterSetting === 'off' || highWaterDatabase
      ? null
      : (highWaterSetting ??
        (database.type !== 'sqlite' ? (zookeeper ?? sequenceZookeeper) : null));
  if (segmentEnabled && highWater) options['segment.highWater.connect'] = highWater;
  // The call timeout belongs to the mark: without it there is nothing to time out.
  else if (!(segmentEnabled && highWaterDatabase))
    delete options['segment.highWater.callTimeoutMs'];

  const internal = readInternalListener(set, host, problems);
  if (internal !== null && !sequenceEnabled) {
    problems.push(
      'LEAF_INTERNAL_PORT serves the internal routes of sequence mode: set LEAF_SEQUENCE_ENABLED=true, or leave it unset',
    );
  }
  if (internal !== null && internal.port === port) {
    problems.push('LEAF_INTERNAL_PORT must differ from PORT');
  }

  if (sequenceEnabled) {
    // The library's rule, checked here to name the variables: one database (LEAF_DB_URL or
    // the embedded default), not LEAF_DB_URLS.
    const databaseProblem = sequenceDatabaseProblem(set.has('LEAF_DB_URLS') ? 'several' : 'one');
    if (databaseProblem !== null) {
      problems.push(
        `LEAF_SEQUENCE_ENABLED=true needs one database (LEAF_DB_URL, not LEAF_DB_URLS): ${databaseProblem}`,
      );
    }
    const advertise = set.get('LEAF_SEQUENCE_ADVERTISE') as string | undefined;
    if (internal !== null && advertise !== undefined && !advertise.startsWith('https://')) {
      problems.push(
        'LEAF_SEQUENCE_ADVERTISE must be https://host:LEAF_INTERNAL_PORT with the internal listener (the others call this instance there)',
      );
    }
    if (internal !== null && advertise === undefined) {
      options['sequence.advertise'] = `https://${advertisedHost(host)}:${internal.port}`;
    } else if (!set.has('LEAF_SEQUENCE_ADVERTISE')) {
      if (port === 0) {
        problems.push(
          'LEAF_SEQUENCE_ENABLED=true with PORT=0: set LEAF_SEQUENCE_ADVERTISE (http://host:port), the address other instances forward to',
        );
      }
      options['sequence.advertise'] = `http://${advertisedHost(host)}:${port}`;
    }
  }

  const region = readRegion(set, parsedDatabase.region, problems, {
    production: production && snowflakeEnabled,
    dataCenterBits,
  });

  const gaplessEnabled = get<boolean>('LEAF_GAPLESS')!;
  if (gaplessEnabled && (!segmentEnabled || database.type === 'sqlite' || set.has('LEAF_DB_URLS')))
    problems.push(
      'LEAF_GAPLESS=true needs LEAF_SEGMENT_ENABLED=true with one database server in LEAF_DB_URL (MySQL/MariaDB or PostgreSQL: a series needs row locks and a shared clock; not SQLite, not LEAF_DB_URLS)',
    );

  const clusterSecret = readSecretList(
    env,
    set,
    problems,
    'LEAF_CLUSTER_SECRET',
    'sequence.clusterSecret',
  );
  if (clusterSecret !== null) options['sequence.clusterSecret'] = clusterSecret;
  const opaqueKeys = readOpaqueKeys(env, set, problems);
  if (opaqueKeys !== null) options['opaque.keys'] = opaqueKeys;
  else delete options['opaque.keys'];

  const adminToken = get<string>('LEAF_ADMIN_TOKEN') ?? null;
  const certFile = get<string>('LEAF_TLS_CERT_FILE');
  const keyFile = get<string>('LEAF_TLS_KEY_FILE');
  if ((certFile === undefined) !== (keyFile === undefined)) {
    problems.push('LEAF_TLS_CERT_FILE and LEAF_TLS_KEY_FILE go together: set both, or neither');
  }
  const clientTokens = loadClientDefinitions(
    get<string>('LEAF_CLIENT_TOKENS'),
    get<string>('LEAF_CLIENT_TOKENS_FILE'),
    (path) => readFileSync(path, 'utf8'),
  );
  problems.push(...clientTokens.problems);
  const config: AppConfig = {
    port,
    host,
    tls: certFile !== undefined && keyFile !== undefined ? { certFile, keyFile } : null,
    adminToken,
    // Closed by default in production: the pages list every tag with its max_id.
    monitorPages:
      (set.get('LEAF_MONITOR_PAGES') as AppConfig['monitorPages'] | undefined) ??
      (!production ? 'open' : adminToken !== null ? 'token' : 'off'),
    clientTokens: clientTokens.clients,
    log: {
      level: get<LogLevelName>('LEAF_LOG_LEVEL')!,
      accessLog: get<boolean>('LEAF_ACCESS_LOG')!,
      // The opaque keys' base64 too, wherever it is read from (a file's are in no variable).
      secrets: [
        ...secretValues(env),
        ...(opaqueKeys ?? []).flatMap((entry) => [entry, entry.slice(entry.indexOf(':') + 1)]),
      ],
    },
    segment: {
      enabled: segmentEnabled,
      database,
      urls: parsedDatabase.urls,
      highWater: segmentEnabled ? highWaterDatabase : null,
      migrate: get<boolean>('LEAF_DB_MIGRATE') ?? database.type === 'sqlite',
    },
    snowflake: {
      enabled: snowflakeEnabled,
      workerSource,
      dataCenterBits,
      region: region.database,
    },
    sequence: { enabled: sequenceEnabled },
    gapless: { enabled: gaplessEnabled },
    internal: sequenceEnabled ? internal : null,
    coordination,
    options: options as LeafOptionValues,
    warnings: region.warnings,
  };
  if (config.monitorPages === 'token' && adminToken === null) {
    problems.push('LEAF_MONITOR_PAGES=token needs LEAF_ADMIN_TOKEN (the token the pages ask for)');
  }
  if (production) {
    // The embedded worker ID is for one process on a developer's machine: two replicas on
    // it would share worker 0 (the database's rule is in parseDatabaseConfig).
    // Several instances in production: the traffic between them must be authenticated.
    if (sequenceEnabled && clusterSecret === null && internal === null) {
      problems.push(
        'NODE_ENV=production with LEAF_SEQUENCE_ENABLED=true needs a cluster secret, or anyone reaching an instance can draw IDs through its internal routes: ' +
          'set LEAF_CLUSTER_SECRET (at least 32 characters, the same on every instance, e.g. `openssl rand -base64 48`) or LEAF_CLUSTER_SECRET_FILE, ' +
          'or serve the internal routes with mutual TLS (LEAF_INTERNAL_PORT with LEAF_INTERNAL_TLS_CERT, _KEY and _CA) (docs/security.md, "Peers")',
      );
    }
    if (snowflakeEnabled && workerSource === 'embedded-default') {
      problems.push(
        'NODE_ENV=production: snowflake mode has no worker-ID source (no LEAF_ZK_ADDRESS, no MySQL/MariaDB or PostgreSQL LEAF_DB_URL to lease worker IDs from, no LEAF_WORKER_ID). ' +
          'Set LEAF_DB_URL=mysql://… or postgres://… (worker IDs leased there), or LEAF_ZK_ADDRESS (with LEAF_SNOWFLAKE_ADVERTISE), or opt in to an embedded worker ID with LEAF_WORKER_ID=<0-1023, unique per instance>, or LEAF_SNOWFLAKE_ENABLED=false',
      );
    }
  }
  if (workerIdFromHostname && set.has('LEAF_WORKER_ID')) {
    problems.push(
      'LEAF_WORKER_ID_FROM_HOSTNAME and LEAF_WORKER_ID are exclusive: the worker ID comes from one source',
    );
  }
  if (problems.length > 0) throw new LeafConfigurationError(problems);
  return config;
}
