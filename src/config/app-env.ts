import {
  COORDINATIONS,
  LEAF_OPTION_RULES,
  type LeafOptionPath,
  type OptionRule,
} from 'nestjs-leaf/server';
import { DEFAULT_DB_URL } from './database-config';

/** Levels of `LEAF_LOG_LEVEL` (pino's). */
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevelName = (typeof LOG_LEVELS)[number];

/**
 * A variable that sets one of the library's options: its default and range are the
 * library's (`LEAF_OPTION_RULES`), and left unset it is not passed on at all.
 */
export interface LibraryEnvVar {
  readonly name: string;
  readonly option: LeafOptionPath;
  /** A secret: a problem with it never echoes the value. */
  readonly secret?: boolean;
}

/** A variable of the application itself, with its own rule. */
export interface AppEnvVar {
  readonly name: string;
  readonly rule: OptionRule;
  /** A secret: a problem with it never echoes the value. */
  readonly secret?: boolean;
}

export type EnvVar = LibraryEnvVar | AppEnvVar;

/** A boolean variable of the application. */
function flag(name: string, defaultValue: boolean, doc: string): AppEnvVar {
  return { name, rule: { type: 'boolean', default: defaultValue, doc } };
}

/** An integer variable of the application. */
function integer(
  name: string,
  rule: Omit<Extract<OptionRule, { type: 'integer' }>, 'type'>,
): AppEnvVar {
  return { name, rule: { type: 'integer', ...rule } };
}

/**
 * A text variable of the application, unset by default: `rangeNote` says what it takes,
 * `defaultNote` what applies while it is unset.
 */
function unsetText(name: string, rangeNote: string, doc: string, defaultNote = 'none'): AppEnvVar {
  return { name, rule: { type: 'string', default: null, defaultNote, rangeNote, doc } };
}

/**
 * Every environment variable the application reads, in the order of docs/configuration.md
 * (generated from this table and the library's rules: `npm run docs:config`).
 */
export const APP_ENV: readonly EnvVar[] = [
  unsetText(
    'NODE_ENV',
    '`production` refuses the embedded defaults',
    'Refuses the embedded SQLite file, an implicit worker ID and unsigned sequence mode.',
    'unset',
  ),
  integer('PORT', { default: 8080, min: 0, max: 65535, doc: 'HTTP port; 0 picks a free one.' }),
  { name: 'HOST', rule: { type: 'string', default: '0.0.0.0', doc: 'Address to listen on.' } },
  // Who may reach the application and how (docs/security.md): HTTPS, the admin token and the
  // monitoring pages, the client tokens.
  unsetText(
    'LEAF_TLS_CERT_FILE',
    'a PEM file; with `LEAF_TLS_KEY_FILE`',
    'Serve HTTPS on `PORT` with this certificate chain.',
    'unset: plain HTTP',
  ),
  unsetText(
    'LEAF_TLS_KEY_FILE',
    'a PEM file; with `LEAF_TLS_CERT_FILE`',
    "The certificate's private key (PEM), read at start.",
    'unset: plain HTTP',
  ),
  {
    name: 'LEAF_ADMIN_TOKEN',
    secret: true,
    rule: {
      type: 'string',
      default: null,
      defaultNote: 'unset: no admin routes',
      pattern: /^.{16,}$/,
      rangeNote: 'at least 16 characters',
      doc: 'Bearer token of the admin routes, which exist only with it.',
    },
  },
  {
    name: 'LEAF_MONITOR_PAGES',
    rule: {
      type: 'enum',
      values: ['open', 'token', 'off'],
      default: 'open',
      defaultNote: '`open`; production: `token` (`off` without an admin token)',
      doc: 'Who may see `/cache` and `/db`: all, admin-token holders, or nobody.',
    },
  },
  {
    ...unsetText(
      'LEAF_CLIENT_TOKENS',
      'a JSON array of `{name, sha256, modes, tags, idsPerSecond?, burst?}`; exclusive with `LEAF_CLIENT_TOKENS_FILE`',
      'Client tokens required on the ID routes (docs/security.md, "Callers").',
      'unset: the ID routes are open',
    ),
    secret: true,
  },
  unsetText(
    'LEAF_CLIENT_TOKENS_FILE',
    'the path of a file holding `LEAF_CLIENT_TOKENS`’s JSON',
    '`LEAF_CLIENT_TOKENS` read from a file at start.',
    'unset',
  ),
  { name: 'LEAF_NAME', option: 'name' },
  { name: 'LEAF_MAX_BATCH', option: 'maxBatchSize' },
  { name: 'LEAF_JOURNAL', option: 'journal' },
  { name: 'LEAF_INSTANCE', option: 'instance' },
  {
    name: 'LEAF_LOG_LEVEL',
    rule: { type: 'enum', values: LOG_LEVELS, default: 'info', doc: 'Level of the JSON logs.' },
  },
  flag(
    'LEAF_ACCESS_LOG',
    false,
    'One log line per request (never headers); it costs about a quarter of the ID routes’ throughput.',
  ),
  flag('LEAF_SEGMENT_ENABLED', true, 'Segment mode (database ranges).'),
  {
    name: 'LEAF_DB_URL',
    rule: {
      type: 'string',
      default: DEFAULT_DB_URL,
      rangeNote:
        '`mysql://user:pass@host:3306/db` (or `mariadb://`), `postgres://…` (or `postgresql://`), `sqlite:<file>`',
      doc: 'The database of `leaf_alloc` (SQLite: one process only).',
    },
  },
  unsetText(
    'LEAF_DB_URLS',
    'comma-separated `mysql://…` or `postgres://…` URLs; exclusive with `LEAF_DB_URL`',
    'Several independent databases serving the same tags by residue class (option `segment.dataSources`; docs/operations.md).',
  ),
  { name: 'LEAF_SEGMENT_DATABASE_TIMEOUT_MS', option: 'segment.databaseTimeoutMs' },
  { name: 'LEAF_SEGMENT_LOAD_TIMEOUT_MS', option: 'segment.loadTimeoutMs' },
  {
    name: 'LEAF_DB_MIGRATE',
    rule: {
      type: 'boolean',
      default: null,
      defaultNote: '`true` with SQLite, `false` with MySQL or PostgreSQL',
      doc: 'Apply the migrations at start (a database server: run `npm run migrate` as a job instead).',
    },
  },
  { name: 'LEAF_SEGMENT_WARM_TAGS', option: 'segment.warmTags' },
  { name: 'LEAF_SEGMENT_READINESS_RUNWAY_MS', option: 'segment.readinessRunwayMs' },
  { name: 'LEAF_MAX_RANGE', option: 'segment.maxRangeCount' },
  { name: 'LEAF_SEGMENT_MAX_STEP', option: 'segment.maxStep' },
  unsetText(
    'LEAF_SEGMENT_HIGH_WATER_ZK',
    'a ZooKeeper connect string, or `off`',
    'ZooKeeper of the segment high-water mark (option `segment.highWater.connect`).',
    '`LEAF_ZK_ADDRESS` (else `LEAF_SEQUENCE_ZK`) with a database server',
  ),
  unsetText(
    'LEAF_SEGMENT_HIGH_WATER_DB_URL',
    '`mysql://…` or `postgres://…` of another server; exclusive with `LEAF_SEGMENT_HIGH_WATER_ZK`',
    'The high-water marks in its `leaf_high_water` (option `segment.highWater.dataSource`).',
  ),
  { name: 'LEAF_SEGMENT_HIGH_WATER_ZK_TIMEOUT_MS', option: 'segment.highWater.callTimeoutMs' },
  flag(
    'LEAF_GAPLESS',
    false,
    'Gapless series in `LEAF_DB_URL` (MySQL/MariaDB or PostgreSQL): `/api/gapless/…`, `/admin/gapless` (docs/gapless.md).',
  ),
  flag('LEAF_SNOWFLAKE_ENABLED', true, 'Snowflake mode (time-based IDs).'),
  {
    name: 'LEAF_COORDINATION',
    rule: {
      type: 'string',
      default: null,
      pattern: new RegExp(`^(${COORDINATIONS.join('|')})$`),
      rangeNote: COORDINATIONS.map((c) => `\`${c}\``).join(' or '),
      defaultNote: '`zookeeper` with `LEAF_ZK_ADDRESS` or `LEAF_SEQUENCE_ZK`, else `database`',
      doc: 'Where worker IDs and the sequence election are coordinated.',
    },
  },
  { name: 'LEAF_ZK_ADDRESS', option: 'snowflake.zookeeper.connect' },
  { name: 'LEAF_WORKER_ID', option: 'snowflake.workerId' },
  { name: 'LEAF_SNOWFLAKE_ADVERTISE', option: 'snowflake.advertise' },
  { name: 'LEAF_STATE_DIR', option: 'snowflake.stateDir' },
  { name: 'LEAF_SNOWFLAKE_STARTUP_MAX_WAIT_MS', option: 'snowflake.startupMaxWaitMs' },
  { name: 'LEAF_SNOWFLAKE_LOCAL_RUNWAY_MS', option: 'snowflake.localRunwayMs' },
  { name: 'LEAF_SNOWFLAKE_LEASE_MS', option: 'snowflake.leaseMs' },
  { name: 'LEAF_SNOWFLAKE_HEARTBEAT_MS', option: 'snowflake.heartbeatIntervalMs' },
  { name: 'LEAF_SNOWFLAKE_LEASE_MARGIN_MS', option: 'snowflake.database.marginMs' },
  { name: 'LEAF_ZK_CONNECT_TIMEOUT_MS', option: 'snowflake.zookeeper.connectTimeoutMs' },
  { name: 'LEAF_ZK_SESSION_TIMEOUT_MS', option: 'snowflake.zookeeper.sessionTimeoutMs' },
  { name: 'LEAF_SNOWFLAKE_RECLAIM', option: 'snowflake.zookeeper.reclaim' },
  { name: 'LEAF_SNOWFLAKE_RECLAIM_MARGIN_MS', option: 'snowflake.zookeeper.reclaimMarginMs' },
  flag(
    'LEAF_WORKER_ID_FROM_HOSTNAME',
    false,
    'The worker ID is the host name’s StatefulSet ordinal (`leaf-3` → 3) plus `LEAF_WORKER_ID_OFFSET`.',
  ),
  { name: 'LEAF_WORKER_ID_OFFSET', option: 'snowflake.ordinal.offset' },
  { name: 'LEAF_SNOWFLAKE_LAYOUT', option: 'snowflake.layout' },
  integer('LEAF_SNOWFLAKE_DATA_CENTER_BITS', {
    default: 0,
    min: 0,
    max: 6,
    doc: 'Worker bits given to a data-centre ID.',
  }),
  { name: 'LEAF_DATA_CENTER_ID', option: 'snowflake.dataCenterId' },
  { name: 'LEAF_REGION', option: 'snowflake.region.name' },
  unsetText(
    'LEAF_REGION_DB_URL',
    '`mysql://…` or `postgres://…`',
    'The region registry (option `snowflake.region.dataSource`).',
  ),
  { name: 'LEAF_REGION_DATA_CENTER_ID', option: 'snowflake.region.dataCenterId' },
  { name: 'LEAF_REGION_LEASE_MS', option: 'snowflake.region.leaseMs' },
  { name: 'LEAF_REGION_RENEW_MS', option: 'snowflake.region.renewIntervalMs' },
  { name: 'LEAF_REGION_MARGIN_MS', option: 'snowflake.region.marginMs' },
  flag('LEAF_SEQUENCE_ENABLED', false, 'Sequence mode (docs/sequence.md).'),
  unsetText(
    'LEAF_SEQUENCE_ZK',
    'a ZooKeeper connect string',
    'ZooKeeper of the issuer election (option `sequence.zookeeper.connect`).',
    '`LEAF_ZK_ADDRESS`',
  ),
  { name: 'LEAF_SEQUENCE_ADVERTISE', option: 'sequence.advertise' },
  { name: 'LEAF_SEQUENCE_GROUPS', option: 'sequence.groups' },
  { name: 'LEAF_SEQUENCE_SESSION_TIMEOUT_MS', option: 'sequence.zookeeper.sessionTimeoutMs' },
  { name: 'LEAF_SEQUENCE_LEASE_MS', option: 'sequence.database.leaseMs' },
  { name: 'LEAF_SEQUENCE_LEASE_MARGIN_MS', option: 'sequence.leaseMarginMs' },
  { name: 'LEAF_SEQUENCE_HEARTBEAT_MS', option: 'sequence.heartbeatIntervalMs' },
  { name: 'LEAF_SEQUENCE_WAIT_MS', option: 'sequence.waitMs' },
  { name: 'LEAF_SEQUENCE_FORWARD_TIMEOUT_MS', option: 'sequence.forwardTimeoutMs' },
  { name: 'LEAF_SEQUENCE_HAND_OVER_AFTER_MS', option: 'sequence.handOverAfterMs' },
  { name: 'LEAF_CLUSTER_SECRET', option: 'sequence.clusterSecret', secret: true },
  unsetText(
    'LEAF_CLUSTER_SECRET_FILE',
    'a readable file; exclusive with `LEAF_CLUSTER_SECRET`',
    '`LEAF_CLUSTER_SECRET` read from a file (two secrets: a comma or line break between).',
  ),
  { name: 'LEAF_OPAQUE_KEYS', option: 'opaque.keys', secret: true },
  unsetText(
    'LEAF_OPAQUE_KEYS_FILE',
    'a readable file; exclusive with `LEAF_OPAQUE_KEYS`',
    '`LEAF_OPAQUE_KEYS` read from a file (a comma or line break between keys).',
  ),
  integer('LEAF_INTERNAL_PORT', {
    default: null,
    defaultNote: 'none: the internal routes on `PORT`',
    min: 1,
    max: 65535,
    rangeNote: 'with `LEAF_INTERNAL_TLS_CERT`, `_KEY` and `_CA`',
    doc: 'A mutual-TLS listener for the internal routes (docs/security.md, "Peers").',
  }),
  unsetText(
    'LEAF_INTERNAL_TLS_CERT',
    'a PEM file',
    "This instance's certificate, as server and client.",
  ),
  unsetText('LEAF_INTERNAL_TLS_KEY', 'a PEM file', 'The private key of `LEAF_INTERNAL_TLS_CERT`.'),
  unsetText('LEAF_INTERNAL_TLS_CA', 'a PEM file', 'The only CA accepted on the internal routes.'),
];

/** Every environment variable `loadAppConfig` reads. */
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
    reason: 'segment mode needs a database.',
  },
  {
    option: 'snowflake.workerId',
    value: '`0` without another worker-ID source',
    reason: 'snowflake mode needs a worker ID.',
  },
  {
    option: 'snowflake.advertise',
    value: 'the first external IPv4 address and `PORT`',
    reason: "the instance's address is its identity.",
  },
  {
    option: 'sequence.advertise',
    value: '`http://` + `HOST` (if one address, else the first external IPv4) + `:PORT`',
    reason: "peers reach the instance's own address (checked at start).",
  },
  {
    option: 'journal',
    value: '`true`',
    reason: "the application's migrations create the journal's tables.",
  },
  {
    option: 'instance',
    value: 'as the library’s, else the host name + `:PORT`',
    reason: 'two instances on one host must differ.',
  },
] as const;

/** The rule a variable is checked against: the library's for its option, or its own. */
export function ruleOf(variable: EnvVar): OptionRule {
  return 'option' in variable ? LEAF_OPTION_RULES[variable.option] : variable.rule;
}

/**
 * The values of the secret variables set in `env` (each item of a comma-separated one too):
 * what `redactSecrets` hides wherever it appears in a log line, a refusal or an answer.
 */
export function secretValues(env: NodeJS.ProcessEnv): string[] {
  const values: string[] = [];
  for (const variable of APP_ENV) {
    if (!('secret' in variable) || variable.secret !== true) continue;
    const raw = env[variable.name]?.trim();
    if (raw === undefined || raw === '') continue;
    // A list of secrets (`new,old`) hides each; a JSON document only as a whole.
    values.push(raw, ...(/[{"]/.test(raw) ? [] : raw.split(',').map((part) => part.trim())));
  }
  return values;
}
