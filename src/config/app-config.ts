import { networkInterfaces } from 'node:os';
import type { DataSource } from 'typeorm';
import {
  LEAF_OPTION_RULES,
  LeafConfigurationError,
  resolveLeafOptions,
  sequenceDatabaseProblem,
  ruleProblem,
  type LeafModuleOptions,
  type LeafSegmentOptions,
  type LeafSequenceOptions,
  type LeafSnowflakeOptions,
  type ResolvedLeafOptions,
  SNOWFLAKE_LAYOUTS,
  type LeafOptionPath,
  type OptionRule,
  type RuleValue,
  type SnowflakeLayoutSpec,
} from 'nestjs-leaf';
import { DEFAULT_DB_URL, parseDatabaseConfig, type DatabaseConfig } from './database-config';

/** Levels of `LEAF_LOG_LEVEL` (pino's). */
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevelName = (typeof LOG_LEVELS)[number];

/** `LEAF_DB_URL` is read in one place (./database-config.ts), shared with the migrations. */
export { DEFAULT_DB_URL, type DatabaseConfig } from './database-config';

/**
 * A variable that sets one of the library's options: its default and range are the
 * library's (`LEAF_OPTION_RULES`), and left unset it is not passed on at all.
 */
export interface LibraryEnvVar {
  readonly name: string;
  readonly option: LeafOptionPath;
}

/** A variable of the application itself, with its own rule. */
export interface AppEnvVar {
  readonly name: string;
  readonly rule: OptionRule;
  /** A secret: a problem with it never echoes the value. */
  readonly secret?: boolean;
}

export type EnvVar = LibraryEnvVar | AppEnvVar;

/**
 * Every environment variable the application reads, in the order of docs/configuration.md
 * (generated from this table and the library's rules: `npm run docs:config`).
 */
export const APP_ENV: readonly EnvVar[] = [
  {
    name: 'NODE_ENV',
    rule: {
      type: 'string',
      default: null,
      defaultNote: 'unset',
      rangeNote: '`production` refuses the embedded defaults',
      doc: 'With `production`, the embedded SQLite file and an implicit worker ID are refused: set `LEAF_DB_URL` and a worker-ID source.',
    },
  },
  {
    name: 'PORT',
    rule: {
      type: 'integer',
      default: 8080,
      min: 0,
      max: 65535,
      doc: 'HTTP port; 0 picks a free one.',
    },
  },
  { name: 'HOST', rule: { type: 'string', default: '0.0.0.0', doc: 'Address to listen on.' } },
  { name: 'LEAF_NAME', option: 'name' },
  { name: 'LEAF_MAX_BATCH', option: 'maxBatchSize' },
  {
    name: 'LEAF_ADMIN_TOKEN',
    secret: true,
    rule: {
      type: 'string',
      default: null,
      defaultNote: 'unset: no admin routes',
      pattern: /^.{16,}$/,
      rangeNote: 'at least 16 characters',
      doc: 'Bearer token of the admin routes (`/admin/*`, `leaf` CLI over HTTP); without it they do not exist.',
    },
  },
  {
    name: 'LEAF_MONITOR_PAGES',
    rule: {
      type: 'enum',
      values: ['open', 'token', 'off'],
      default: 'open',
      doc: '`/cache` and `/db`: open to all, behind the admin token, or not served.',
    },
  },
  {
    name: 'LEAF_LOG_LEVEL',
    rule: { type: 'enum', values: LOG_LEVELS, default: 'info', doc: 'Level of the JSON logs.' },
  },
  {
    name: 'LEAF_ACCESS_LOG',
    rule: {
      type: 'boolean',
      default: false,
      doc: 'One access-log line per request (method, URL, status, time; never headers), written in batches. Off by default: it costs about a tenth of the single-ID routes’ throughput (docs/benchmarks.md), and `/metrics` already counts every request by route and status.',
    },
  },
  {
    name: 'LEAF_SEGMENT_ENABLED',
    rule: { type: 'boolean', default: true, doc: 'Segment mode (database ranges).' },
  },
  {
    name: 'LEAF_DB_URL',
    rule: {
      type: 'string',
      default: DEFAULT_DB_URL,
      rangeNote: '`mysql://user:pass@host:3306/db` (or `mariadb://`), `sqlite:<file>`',
      doc: 'The database of `leaf_alloc`. The SQLite default is for one instance on a developer machine.',
    },
  },
  {
    name: 'LEAF_DB_URLS',
    rule: {
      type: 'string',
      default: null,
      defaultNote: 'none: one database (`LEAF_DB_URL`)',
      rangeNote: 'comma-separated `mysql://…` URLs; exclusive with `LEAF_DB_URL`',
      doc: 'Several independent MySQL/MariaDB databases serving the same tags (option `segment.dataSources`): each row’s residue class (`id_modulus`, `id_residue`) says which IDs of its ranges are served, and the instance serves while any one database answers (docs/design.md, "Several databases per tag"; setting one up: docs/operations.md). The order does not matter.',
    },
  },
  { name: 'LEAF_SEGMENT_DATABASE_TIMEOUT_MS', option: 'segment.databaseTimeoutMs' },
  { name: 'LEAF_SEGMENT_LOAD_TIMEOUT_MS', option: 'segment.loadTimeoutMs' },
  {
    name: 'LEAF_DB_MIGRATE',
    rule: {
      type: 'boolean',
      default: null,
      defaultNote: '`true` with SQLite, `false` with MySQL',
      doc: 'Apply the schema migrations at start (with MySQL, run `npm run migrate` as a job instead).',
    },
  },
  { name: 'LEAF_SEGMENT_WARM_TAGS', option: 'segment.warmTags' },
  { name: 'LEAF_SEGMENT_READINESS_RUNWAY_MS', option: 'segment.readinessRunwayMs' },
  { name: 'LEAF_MAX_RANGE', option: 'segment.maxRangeCount' },
  { name: 'LEAF_SEGMENT_MAX_STEP', option: 'segment.maxStep' },
  {
    name: 'LEAF_SEGMENT_HIGH_WATER_ZK',
    rule: {
      type: 'string',
      default: null,
      defaultNote:
        '`LEAF_ZK_ADDRESS` (else, with sequence mode on, `LEAF_SEQUENCE_ZK`), when `LEAF_DB_URL` is MySQL/MariaDB',
      rangeNote: 'a ZooKeeper connect string, or `off`',
      doc: 'ZooKeeper of the per-tag segment high-water mark (option `segment.highWater.connect`): a lowered or restored `max_id` is repaired instead of re-issued. `off` leaves only the in-memory guard and the database trigger: then never lower `max_id` or restore `leaf_alloc` (docs/operations.md).',
    },
  },
  { name: 'LEAF_SEGMENT_HIGH_WATER_ZK_TIMEOUT_MS', option: 'segment.highWater.callTimeoutMs' },
  {
    name: 'LEAF_SNOWFLAKE_ENABLED',
    rule: { type: 'boolean', default: true, doc: 'Snowflake mode (time-based IDs).' },
  },
  { name: 'LEAF_ZK_ADDRESS', option: 'snowflake.zookeeper.connect' },
  { name: 'LEAF_WORKER_ID', option: 'snowflake.workerId' },
  { name: 'LEAF_SNOWFLAKE_ADVERTISE', option: 'snowflake.advertise' },
  { name: 'LEAF_STATE_DIR', option: 'snowflake.stateDir' },
  { name: 'LEAF_SNOWFLAKE_STARTUP_MAX_WAIT_MS', option: 'snowflake.startupMaxWaitMs' },
  { name: 'LEAF_SNOWFLAKE_LOCAL_RUNWAY_MS', option: 'snowflake.localRunwayMs' },
  { name: 'LEAF_ZK_CONNECT_TIMEOUT_MS', option: 'snowflake.zookeeper.connectTimeoutMs' },
  { name: 'LEAF_ZK_SESSION_TIMEOUT_MS', option: 'snowflake.zookeeper.sessionTimeoutMs' },
  { name: 'LEAF_SNOWFLAKE_RECLAIM', option: 'snowflake.zookeeper.reclaim' },
  { name: 'LEAF_SNOWFLAKE_RECLAIM_MARGIN_MS', option: 'snowflake.zookeeper.reclaimMarginMs' },
  {
    name: 'LEAF_WORKER_ID_FROM_HOSTNAME',
    rule: {
      type: 'boolean',
      default: false,
      doc: 'The worker ID is the StatefulSet ordinal of the host name (`leaf-3` → 3) plus `LEAF_WORKER_ID_OFFSET`; with `LEAF_ZK_ADDRESS` guarded there too.',
    },
  },
  { name: 'LEAF_WORKER_ID_OFFSET', option: 'snowflake.ordinal.offset' },
  { name: 'LEAF_SNOWFLAKE_LAYOUT', option: 'snowflake.layout' },
  {
    name: 'LEAF_SNOWFLAKE_DATA_CENTER_BITS',
    rule: {
      type: 'integer',
      default: 0,
      min: 0,
      max: 6,
      doc: "Bits of the layout's worker field given to a data-centre ID (`LEAF_DATA_CENTER_ID`).",
    },
  },
  { name: 'LEAF_DATA_CENTER_ID', option: 'snowflake.dataCenterId' },
  {
    name: 'LEAF_SEQUENCE_ENABLED',
    rule: {
      type: 'boolean',
      default: false,
      doc: 'Sequence mode (IDs per key that increase across every instance, docs/design.md "Sequence mode"). Needs segment mode\'s database and ZooKeeper (`LEAF_SEQUENCE_ZK` or `LEAF_ZK_ADDRESS`).',
    },
  },
  {
    name: 'LEAF_SEQUENCE_ZK',
    rule: {
      type: 'string',
      default: null,
      defaultNote: '`LEAF_ZK_ADDRESS`',
      rangeNote: 'a ZooKeeper connect string',
      doc: 'ZooKeeper of the sequence issuer election (option `sequence.zookeeper.connect`).',
    },
  },
  { name: 'LEAF_SEQUENCE_ADVERTISE', option: 'sequence.advertise' },
  { name: 'LEAF_SEQUENCE_GROUPS', option: 'sequence.groups' },
  { name: 'LEAF_SEQUENCE_SESSION_TIMEOUT_MS', option: 'sequence.zookeeper.sessionTimeoutMs' },
  { name: 'LEAF_SEQUENCE_LEASE_MARGIN_MS', option: 'sequence.leaseMarginMs' },
  { name: 'LEAF_SEQUENCE_HEARTBEAT_MS', option: 'sequence.heartbeatIntervalMs' },
  { name: 'LEAF_SEQUENCE_WAIT_MS', option: 'sequence.waitMs' },
  { name: 'LEAF_SEQUENCE_FORWARD_TIMEOUT_MS', option: 'sequence.forwardTimeoutMs' },
  { name: 'LEAF_SEQUENCE_HAND_OVER_AFTER_MS', option: 'sequence.handOverAfterMs' },
];

/** Every environment variable {@link loadAppConfig} reads. */
export const APP_ENV_VARS: readonly string[] = APP_ENV.map((v) => v.name);

/**
 * Where the application's defaults deliberately differ from the library's: the library has
 * no default for these (it refuses to guess), the application supplies one so that
 * `npm start` runs on a developer's machine with no configuration. Each is refused with
 * `NODE_ENV=production`. This is the only list of such differences (docs/configuration.md
 * prints it; a test holds the empty environment to it).
 */
export const APP_DEFAULT_DIFFERENCES = [
  {
    option: 'segment.dataSource',
    value: `the embedded SQLite file (\`LEAF_DB_URL\` = \`${DEFAULT_DB_URL}\`)`,
    reason:
      'segment mode needs a database; one file for one process on a developer machine. Refused in production.',
  },
  {
    option: 'snowflake.workerId',
    value:
      '`0` when no worker-ID source is set (`LEAF_ZK_ADDRESS`, `LEAF_WORKER_ID`, `LEAF_WORKER_ID_FROM_HOSTNAME`)',
    reason:
      'snowflake mode needs a worker ID; worker 0, guarded by the state file lock, for one process. Refused in production.',
  },
  {
    option: 'snowflake.advertise',
    value: 'the first non-internal IPv4 address and `PORT`, with `LEAF_ZK_ADDRESS`',
    reason: "the identity registered in ZooKeeper is this instance's address unless set.",
  },
  {
    option: 'sequence.advertise',
    value:
      '`http://` + `HOST` when it names one address, else the first non-internal IPv4 address, + `:` + `PORT`, with `LEAF_SEQUENCE_ENABLED`',
    reason:
      "other instances forward sequence calls to this instance's own address unless set; each instance checks at start that the address reaches itself before it stands for election.",
  },
] as const;

/** The library's options the environment set, by option path; absent = the library's default. */
export type LeafOptionValues = { readonly [P in LeafOptionPath]?: RuleValue<P> };

/** The application's configuration, read from the environment (docs/configuration.md). */
export interface AppConfig {
  readonly port: number;
  readonly host: string;
  /** Bearer token of the admin routes; `null` = no admin routes. */
  readonly adminToken: string | null;
  /** `/cache` and `/db`: open to all, behind the admin token, or not served. */
  readonly monitorPages: 'open' | 'token' | 'off';
  /** Structured (JSON) logs: pino level, and whether each request gets an access-log line. */
  readonly log: { readonly level: LogLevelName; readonly accessLog: boolean };
  readonly segment: {
    readonly enabled: boolean;
    readonly database: DatabaseConfig;
    /** `LEAF_DB_URLS`: several databases serving the same tags (`null`: one, `database`). */
    readonly urls: readonly string[] | null;
    readonly migrate: boolean;
  };
  readonly snowflake: {
    readonly enabled: boolean;
    /** Where the worker ID comes from. `embedded-default` is the development default, worker 0. */
    readonly workerSource: 'zookeeper' | 'hostname' | 'explicit' | 'embedded-default';
    /** `LEAF_SNOWFLAKE_DATA_CENTER_BITS`: bits of the worker field given to the data-centre ID. */
    readonly dataCenterBits: number;
  };
  readonly sequence: { readonly enabled: boolean };
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

const TRUE = ['true', '1', 'yes', 'on'];
const FALSE = ['false', '0', 'no', 'off'];

/** The rule a variable is checked against: the library's for its option, or its own. */
export function ruleOf(variable: EnvVar): OptionRule {
  return 'option' in variable ? LEAF_OPTION_RULES[variable.option] : variable.rule;
}

/**
 * The typed value of `raw` under `rule`, or a problem: text to integer (decimal digits),
 * boolean (true/false, 1/0, yes/no, on/off), list (comma-separated); then the rule's range.
 */
function parseEnvValue(rule: OptionRule, raw: string): { value: unknown } | { problem: string } {
  let value: unknown = raw;
  switch (rule.type) {
    case 'integer':
      value = /^\d+$/.test(raw) ? Number(raw) : NaN;
      break;
    case 'fraction':
      value = Number(raw);
      break;
    case 'boolean': {
      const lower = raw.toLowerCase();
      value = TRUE.includes(lower) ? true : FALSE.includes(lower) ? false : raw;
      break;
    }
    case 'enum':
      value = raw.toLowerCase();
      break;
    case 'list':
      value = raw
        .split(',')
        .map((item) => item.trim())
        .filter((item) => item !== '');
      break;
    case 'string':
      break;
  }
  const problem = ruleProblem(rule, value);
  return problem === null ? { value } : { problem };
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
  for (const variable of APP_ENV) {
    const raw = env[variable.name]?.trim();
    if (raw === undefined || raw === '') continue;
    const parsed = parseEnvValue(ruleOf(variable), raw);
    if ('problem' in parsed) {
      const option = 'option' in variable ? ` (option ${variable.option})` : '';
      const got = 'secret' in variable && variable.secret ? '' : ` (got "${raw}")`;
      problems.push(`${variable.name} must be ${parsed.problem}${option}${got}`);
    } else {
      set.set(variable.name, parsed.value);
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

  const options: { [P in LeafOptionPath]?: unknown } = {};
  for (const variable of APP_ENV) {
    if ('option' in variable && set.has(variable.name))
      options[variable.option] = set.get(variable.name);
  }

  const port = get<number>('PORT')!;
  const segmentEnabled = get<boolean>('LEAF_SEGMENT_ENABLED')!;
  // LEAF_DB_URL (and the production rule for it) is read where the migrations read it too.
  const parsedDatabase = parseDatabaseConfig(env, {
    required: segmentEnabled,
    otherwise: 'LEAF_SEGMENT_ENABLED=false',
  });
  problems.push(...parsedDatabase.problems);
  const database = parsedDatabase.database;

  const zookeeper = set.has('LEAF_ZK_ADDRESS');
  const explicitWorkerId = set.has('LEAF_WORKER_ID');
  const fromHostname = get<boolean>('LEAF_WORKER_ID_FROM_HOSTNAME')!;
  const workerSource = fromHostname
    ? 'hostname'
    : zookeeper
      ? 'zookeeper'
      : explicitWorkerId
        ? 'explicit'
        : 'embedded-default';
  if (zookeeper && !fromHostname && !set.has('LEAF_SNOWFLAKE_ADVERTISE'))
    options['snowflake.advertise'] = `${firstIPv4()}:${port}`;

  const sequenceEnabled = get<boolean>('LEAF_SEQUENCE_ENABLED')!;
  const sequenceZk =
    get<string>('LEAF_SEQUENCE_ZK') ?? (set.get('LEAF_ZK_ADDRESS') as string | undefined);

  // Safe by default: ZooKeeper configured for the app (the snowflake one, else the sequence
  // election's) fences MySQL/MariaDB allocations too; a restored leaf_alloc is then repaired
  // instead of re-served, in segment and sequence mode alike.
  const highWaterSetting = get<string>('LEAF_SEGMENT_HIGH_WATER_ZK');
  const highWater =
    highWaterSetting === 'off'
      ? null
      : (highWaterSetting ??
        (database.type === 'mysql'
          ? ((set.get('LEAF_ZK_ADDRESS') as string | undefined) ??
            (sequenceEnabled ? sequenceZk : undefined))
          : null));
  if (segmentEnabled && highWater) options['segment.highWater.connect'] = highWater;
  // The call timeout belongs to the mark: without it there is nothing to time out.
  else delete options['segment.highWater.callTimeoutMs'];

  if (sequenceEnabled) {
    // The library's rule, checked here to name the variables: LEAF_SEGMENT_ENABLED with one
    // database (LEAF_DB_URL or the embedded default), not LEAF_DB_URLS.
    const databaseProblem = sequenceDatabaseProblem(
      !segmentEnabled ? 'none' : set.has('LEAF_DB_URLS') ? 'several' : 'one',
    );
    if (databaseProblem !== null) {
      problems.push(
        `LEAF_SEQUENCE_ENABLED=true needs LEAF_SEGMENT_ENABLED=true with one database (LEAF_DB_URL, not LEAF_DB_URLS): ${databaseProblem}`,
      );
    }
    if (sequenceZk === undefined) {
      problems.push(
        'LEAF_SEQUENCE_ENABLED=true needs ZooKeeper for the issuer election: set LEAF_SEQUENCE_ZK or LEAF_ZK_ADDRESS',
      );
    } else {
      options['sequence.zookeeper.connect'] = sequenceZk;
    }
    if (!set.has('LEAF_SEQUENCE_ADVERTISE')) {
      if (port === 0) {
        problems.push(
          'LEAF_SEQUENCE_ENABLED=true with PORT=0: set LEAF_SEQUENCE_ADVERTISE (http://host:port), the address other instances forward to',
        );
      }
      options['sequence.advertise'] = `http://${advertisedHost(get<string>('HOST')!)}:${port}`;
    }
  }

  const adminToken = get<string>('LEAF_ADMIN_TOKEN') ?? null;
  const config: AppConfig = {
    port,
    host: get<string>('HOST')!,
    adminToken,
    monitorPages: get<AppConfig['monitorPages']>('LEAF_MONITOR_PAGES')!,
    log: {
      level: get<LogLevelName>('LEAF_LOG_LEVEL')!,
      accessLog: get<boolean>('LEAF_ACCESS_LOG')!,
    },
    segment: {
      enabled: segmentEnabled,
      database,
      urls: parsedDatabase.urls,
      migrate: get<boolean>('LEAF_DB_MIGRATE') ?? database.type === 'sqlite',
    },
    snowflake: {
      enabled: get<boolean>('LEAF_SNOWFLAKE_ENABLED')!,
      workerSource,
      dataCenterBits: get<number>('LEAF_SNOWFLAKE_DATA_CENTER_BITS')!,
    },
    sequence: { enabled: sequenceEnabled },
    options: options as LeafOptionValues,
  };
  if (config.monitorPages === 'token' && adminToken === null) {
    problems.push('LEAF_MONITOR_PAGES=token needs LEAF_ADMIN_TOKEN (the token the pages ask for)');
  }
  if (get<string>('NODE_ENV') === 'production') {
    // The embedded worker ID is for one process on a developer's machine: two replicas on
    // it would share worker 0 (the database's rule is in parseDatabaseConfig).
    if (config.snowflake.enabled && workerSource === 'embedded-default') {
      problems.push(
        'NODE_ENV=production: snowflake mode has no worker-ID source (neither LEAF_ZK_ADDRESS nor LEAF_WORKER_ID is set). ' +
          'Set LEAF_ZK_ADDRESS (with LEAF_SNOWFLAKE_ADVERTISE), or opt in to an embedded worker ID with LEAF_WORKER_ID=<0-1023, unique per instance>, or LEAF_SNOWFLAKE_ENABLED=false',
      );
    }
  }
  if (fromHostname && explicitWorkerId) {
    problems.push(
      'LEAF_WORKER_ID_FROM_HOSTNAME and LEAF_WORKER_ID are exclusive: the worker ID comes from one source',
    );
  }
  if (zookeeper && explicitWorkerId) {
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
 * `undefined` when neither is set (the library's default layout).
 */
export function snowflakeLayoutOption(
  layout: 'leaf' | 'js-safe' | undefined,
  dataCenterBits: number,
): 'leaf' | 'js-safe' | SnowflakeLayoutSpec | undefined {
  if (dataCenterBits === 0) return layout;
  const named = SNOWFLAKE_LAYOUTS[layout ?? LEAF_OPTION_RULES['snowflake.layout'].default];
  return {
    ...named,
    dataCenterBits,
    workerBits: named.workerBits - dataCenterBits,
  };
}

/**
 * Maps the application's configuration to the library's options: exactly the options the
 * operator set (an unset variable is not passed on, so the library's default applies), plus
 * the development defaults of {@link APP_DEFAULT_DIFFERENCES}.
 */
export function toLeafOptions(
  config: AppConfig,
  dataSource: DataSource | null,
  dataSources: readonly DataSource[] | null = null,
): LeafModuleOptions {
  const options: Record<string, unknown> = {};
  for (const [path, value] of Object.entries(config.options)) setPath(options, path, value);
  const snowflake = (options.snowflake ?? {}) as LeafSnowflakeOptions & Record<string, unknown>;
  const layout = snowflakeLayoutOption(
    snowflake.layout as 'leaf' | 'js-safe' | undefined,
    config.snowflake.dataCenterBits,
  );
  if (layout !== undefined) snowflake.layout = layout;
  switch (config.snowflake.workerSource) {
    case 'hostname': {
      // The ordinal source takes the offset; ZooKeeper (if set) guards it, with no advertise.
      const { offset } = (snowflake.ordinal ?? {}) as { offset?: number };
      snowflake.ordinal = offset === undefined ? true : { offset };
      break;
    }
    case 'embedded-default':
      // APP_DEFAULT_DIFFERENCES: worker 0 for one process on a developer machine.
      snowflake.workerId = 0;
      delete snowflake.ordinal;
      break;
    default:
      delete snowflake.ordinal;
  }
  const segment = (options.segment ?? {}) as LeafSegmentOptions;
  // Sequence mode is off in the library unless given: passed on only when switched on.
  const { sequence, ...rest } = options;
  return {
    ...rest,
    segment: !config.segment.enabled
      ? false
      : dataSources
        ? { ...segment, dataSources: [...dataSources] }
        : dataSource
          ? { ...segment, dataSource }
          : false,
    snowflake: config.snowflake.enabled ? snowflake : false,
    ...(config.sequence.enabled ? { sequence: sequence as LeafSequenceOptions } : {}),
  };
}

/** Sets `a.b.c` of `target` to `value`, creating the objects on the way. */
function setPath(target: Record<string, unknown>, path: string, value: unknown): void {
  const keys = path.split('.');
  let node = target;
  for (const key of keys.slice(0, -1)) {
    node[key] ??= {};
    node = node[key] as Record<string, unknown>;
  }
  node[keys[keys.length - 1]!] = value;
}

/**
 * The options the library runs with for `config` (defaults applied, validated), for tools
 * that need the effective values without starting the application: the CLI, deployment
 * checks. Segment mode is left out (it needs an open database).
 * @throws {LeafConfigurationError} as `LeafModule` would at start.
 */
export function effectiveLeafOptions(config: AppConfig): ResolvedLeafOptions {
  return resolveLeafOptions({ ...toLeafOptions(config, null), segment: false, sequence: false });
}
