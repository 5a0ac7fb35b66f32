import {
  DEFAULT_SNOWFLAKE_EPOCH,
  JS_SAFE_EPOCH,
  SNOWFLAKE_MAX_SEQUENCE,
  SNOWFLAKE_MAX_WORKER_ID,
} from './snowflake/snowflake-layout';
import { OPAQUE_KEY_NOTE } from './formats/opaque-ids';
import type { OptionRule } from './option-rule';
import { GAPLESS_OPTION_RULES } from './gapless/gapless-option-rules';
import { SEQUENCE_OPTION_RULES } from './sequence/sequence-option-rules';

/**
 * The one place where every option of `LeafModule` gets its default and its valid range.
 * The resolver (`resolveLeafOptions`), the `@default` tags of `LeafModuleOptions`, the
 * application's environment parsing and docs/configuration.md all read these rules; nothing
 * else writes a default or a range down (docs/configuration.md is generated from them and a
 * test fails when it drifts).
 */

const MAX_INT32 = 2 ** 31 - 1;
const DAY_MS = 86_400_000;
const TEN_MINUTES_MS = 600_000;

/** The reclaim modes of `snowflake.zookeeper.reclaim` (docs/design.md, "Reclaiming worker IDs"). */
export const WORKER_RECLAIM_MODES = ['never', 'when-exhausted', 'always'] as const;

/** The named snowflake layouts. */
export const SNOWFLAKE_LAYOUT_NAMES = ['leaf', 'js-safe'] as const;

/**
 * Every option of `LeafModuleOptions` by its path, with its default and range. Options whose
 * value depends on another (the epoch on the layout, ranges on the layout's bits) say so in
 * `defaultNote` / `rangeNote`; the resolver applies those rules on top.
 */
export const LEAF_OPTION_RULES = {
  name: {
    type: 'string',
    default: 'leaf',
    pattern: /^[A-Za-z0-9._-]{1,64}$/,
    rangeNote: '1-64 characters of `A-Z a-z 0-9 . _ -` (no `/`)',
    doc: 'Namespace of this deployment (`/snowflake/{name}` in ZooKeeper).',
  },
  journal: {
    type: 'boolean',
    default: false,
    doc: 'Record who was granted each range and leased worker ID (docs/security.md, "Who issued an ID").',
  },
  instance: {
    type: 'string',
    default: null,
    defaultNote:
      '`snowflake.advertise`, else `sequence.advertise`’s `host:port`, else the host name',
    pattern: /^\P{Cc}{1,255}$/u,
    rangeNote: '1-255 characters, no control characters',
    doc: "This instance's identity in the ID journal.",
  },
  maxBatchSize: {
    type: 'integer',
    default: 1000,
    min: 1,
    max: 1_000_000,
    doc: 'Largest `count` of a batch call (`getIds`, `/api/*/ids?count=`).',
  },
  'segment.maxStep': {
    type: 'integer',
    default: 1_000_000,
    min: 1,
    max: MAX_INT32,
    doc: 'Upper bound of the dynamic step.',
  },
  'segment.maxRangeCount': {
    type: 'integer',
    default: null,
    defaultNote: '`segment.maxStep`',
    min: 1,
    max: MAX_INT32,
    doc: 'Largest `count` of `getRange` and the range route.',
  },
  'segment.stepDurationMs': {
    type: 'integer',
    default: 15 * 60_000,
    min: 1,
    max: Number.MAX_SAFE_INTEGER,
    doc: 'Target lifetime of a segment, which doubles or halves the step.',
  },
  'segment.refreshIntervalMs': {
    type: 'integer',
    default: 60_000,
    min: 10,
    max: Number.MAX_SAFE_INTEGER,
    doc: 'Period of the tag-list refresh.',
  },
  'segment.loadTimeoutMs': {
    type: 'integer',
    default: 3000,
    min: 0,
    max: Number.MAX_SAFE_INTEGER,
    doc: 'How long a request waits for the next range.',
  },
  'segment.preloadThreshold': {
    type: 'fraction',
    default: 0.9,
    exclusiveMin: 0,
    max: 1,
    doc: 'The share of a segment left when the next range is loaded.',
  },
  'segment.maxConcurrentLoads': {
    type: 'integer',
    default: 8,
    min: 1,
    max: 1024,
    doc: 'Most range loads in flight at once across all tags.',
  },
  'segment.warmTags': {
    type: 'list',
    default: [],
    doc: 'Tags loaded at start instead of on first use.',
  },
  'segment.readinessRunwayMs': {
    type: 'integer',
    default: 30_000,
    min: 0,
    max: DAY_MS,
    doc: 'After a failed allocation, readiness is down while a tag has less than this many ms of IDs left (0: off).',
  },
  'segment.handBackOnClose': {
    type: 'boolean',
    default: true,
    doc: "Hand each tag's unused IDs back at a graceful stop.",
  },
  'segment.databaseTimeoutMs': {
    type: 'integer',
    default: 1000,
    min: 1,
    max: 60_000,
    doc: 'With several databases, how long one may take before the next is asked.',
  },
  'segment.highWater.connect': {
    type: 'string',
    default: null,
    defaultNote: 'none: no high-water mark',
    rangeNote:
      '`host:port[,host:port…][/chroot]`, allocation on MySQL/MariaDB or PostgreSQL; or `segment.highWater.dataSource`',
    doc: 'ZooKeeper of the tags’ high-water marks (docs/design.md, "High-water mark").',
  },
  'segment.highWater.sessionTimeoutMs': {
    type: 'integer',
    default: 10_000,
    min: 1000,
    max: TEN_MINUTES_MS,
    doc: 'Session timeout of the mark’s ZooKeeper client.',
  },
  'segment.highWater.callTimeoutMs': {
    type: 'integer',
    default: 2000,
    min: 100,
    max: 60_000,
    doc: 'Deadline of one read or write of a tag’s mark (past it: `LEAF_HIGH_WATER_UNAVAILABLE`).',
  },
  'snowflake.layout': {
    type: 'enum',
    values: SNOWFLAKE_LAYOUT_NAMES,
    default: 'leaf',
    rangeNote: 'or an explicit bit split',
    doc: 'Bit layout (docs/snowflake.md, "Layouts").',
  },
  'snowflake.epoch': {
    type: 'integer',
    default: null,
    defaultNote: `${DEFAULT_SNOWFLAKE_EPOCH} (Leaf's); ${JS_SAFE_EPOCH} with \`js-safe\``,
    min: 0,
    max: Number.MAX_SAFE_INTEGER,
    rangeNote: 'not in the future, and the layout’s timestamp field must not have run out',
    doc: 'Start of the millisecond field.',
  },
  'snowflake.dataCenterId': {
    type: 'integer',
    default: 0,
    min: 0,
    max: 63,
    rangeNote: "up to 2^(the layout's data-centre bits) − 1",
    doc: 'Data-centre ID in every ID.',
  },
  'snowflake.workerId': {
    type: 'integer',
    default: null,
    defaultNote: 'none: a worker-ID source is required',
    min: 0,
    max: SNOWFLAKE_MAX_WORKER_ID,
    rangeNote: "up to 2^(the layout's worker bits) − 1",
    doc: 'A fixed worker ID, one per instance.',
  },
  'snowflake.advertise': {
    type: 'string',
    default: null,
    defaultNote: 'none (required with ZooKeeper); the host name with `snowflake.database`',
    rangeNote: '`ip:port`',
    doc: 'This instance’s identity in ZooKeeper or the lease row.',
  },
  'snowflake.stateDir': {
    type: 'string',
    default: './data',
    doc: 'Directory of the local state file (worker ID and time lease).',
  },
  'snowflake.sequenceRandomBound': {
    type: 'integer',
    default: 100,
    min: 0,
    max: SNOWFLAKE_MAX_SEQUENCE,
    doc: "Each millisecond's sequence starts at a random value below this.",
  },
  'snowflake.clockBackwardsToleranceMs': {
    type: 'integer',
    default: 5,
    min: 0,
    max: 60_000,
    doc: 'A clock that went back by at most this many ms is waited out.',
  },
  'snowflake.heartbeatIntervalMs': {
    type: 'integer',
    default: 3000,
    min: 10,
    max: Number.MAX_SAFE_INTEGER,
    doc: 'Period of the heartbeat that extends the time lease.',
  },
  'snowflake.leaseMs': {
    type: 'integer',
    default: 10_000,
    min: 1,
    max: Number.MAX_SAFE_INTEGER,
    rangeNote: 'more than `snowflake.heartbeatIntervalMs`',
    doc: 'How far beyond "now" each extension of the time lease reaches.',
  },
  'snowflake.localRunwayMs': {
    type: 'integer',
    default: 60_000,
    min: 0,
    max: DAY_MS,
    doc: 'How long the lease is extended locally with ZooKeeper unreachable.',
  },
  'snowflake.startupMaxWaitMs': {
    type: 'integer',
    default: 90_000,
    min: 0,
    max: TEN_MINUTES_MS,
    doc: 'How long a start waits for its clock or a worker ID before refusing.',
  },
  'snowflake.zookeeper.connect': {
    type: 'string',
    default: null,
    defaultNote: 'none',
    rangeNote: '`host:port[,host:port…][/chroot]`',
    doc: 'ZooKeeper of the worker IDs.',
  },
  'snowflake.zookeeper.sessionTimeoutMs': {
    type: 'integer',
    default: 10_000,
    min: 1000,
    max: TEN_MINUTES_MS,
    doc: 'Requested ZooKeeper session timeout.',
  },
  'snowflake.zookeeper.connectTimeoutMs': {
    type: 'integer',
    default: 5000,
    min: 100,
    max: TEN_MINUTES_MS,
    doc: 'How long a start waits for ZooKeeper before using the state file.',
  },
  'snowflake.zookeeper.reclaim': {
    type: 'enum',
    values: WORKER_RECLAIM_MODES,
    default: 'when-exhausted',
    doc: 'When a start takes over a gone instance’s worker ID (docs/snowflake.md).',
  },
  'snowflake.zookeeper.reclaimMarginMs': {
    type: 'integer',
    default: 2000,
    min: 0,
    max: TEN_MINUTES_MS,
    doc: "How far past a gone holder's horizon a reclaim waits.",
  },
  'snowflake.database.marginMs': {
    type: 'integer',
    default: 1000,
    min: 0,
    max: TEN_MINUTES_MS,
    rangeNote: 'less than `snowflake.leaseMs` − `snowflake.heartbeatIntervalMs`',
    doc: 'A database lease stops issuing this long before its row expires.',
  },
  'snowflake.database.callTimeoutMs': {
    type: 'integer',
    default: 2000,
    min: 10,
    max: TEN_MINUTES_MS,
    doc: 'Deadline of a database lease claim, renewal or release.',
  },
  'snowflake.region.name': {
    type: 'string',
    default: null,
    defaultNote: 'none',
    pattern: /^[A-Za-z0-9._-]{1,64}$/,
    rangeNote: '1-64 characters, as `name`',
    doc: 'This region (docs/operations.md, "Regions").',
  },
  'snowflake.region.dataCenterId': {
    type: 'integer',
    default: null,
    defaultNote: 'none',
    min: 0,
    max: 63,
    rangeNote: 'as `dataCenterId`',
    doc: 'The data-centre ID leased.',
  },
  'snowflake.region.leaseMs': {
    type: 'integer',
    default: 4 * 3_600_000,
    min: 1000,
    max: 7 * DAY_MS,
    doc: 'Length of the region lease.',
  },
  'snowflake.region.renewIntervalMs': {
    type: 'integer',
    default: 300_000,
    min: 100,
    max: DAY_MS,
    rangeNote: 'less than `leaseMs` − `marginMs`',
    doc: 'Renewal period of the region lease.',
  },
  'snowflake.region.marginMs': {
    type: 'integer',
    default: 60_000,
    min: 0,
    max: DAY_MS,
    doc: 'Issuing stops this long before the region lease could end.',
  },
  'snowflake.region.callTimeoutMs': {
    type: 'integer',
    default: 5000,
    min: 10,
    max: TEN_MINUTES_MS,
    doc: 'Deadline of a region lease claim or renewal.',
  },
  'snowflake.ordinal.offset': {
    type: 'integer',
    default: 0,
    min: 0,
    max: SNOWFLAKE_MAX_WORKER_ID,
    rangeNote: 'ordinal + offset up to the largest worker ID',
    doc: "Added to a StatefulSet pod's ordinal to give its worker ID.",
  },
  ...SEQUENCE_OPTION_RULES,
  ...GAPLESS_OPTION_RULES,
  'opaque.keys': {
    type: 'list',
    default: [],
    defaultNote: 'none: opaque IDs are refused',
    maxItems: 52,
    rangeNote: OPAQUE_KEY_NOTE,
    doc: 'The key ring of opaque public IDs (docs/public-ids.md).',
  },
} as const satisfies Record<string, OptionRule>;

/** The path of an option in {@link LEAF_OPTION_RULES}. */
export type LeafOptionPath = keyof typeof LEAF_OPTION_RULES;

/** The value type of the option at `path`. */
export type RuleValue<P extends LeafOptionPath> = (typeof LEAF_OPTION_RULES)[P] extends {
  type: 'integer' | 'fraction';
}
  ? number
  : (typeof LEAF_OPTION_RULES)[P] extends { type: 'boolean' }
    ? boolean
    : (typeof LEAF_OPTION_RULES)[P] extends { type: 'enum'; values: readonly (infer V)[] }
      ? V
      : (typeof LEAF_OPTION_RULES)[P] extends { type: 'list' }
        ? string[]
        : string;
