import type { OptionRule } from '../option-rule';
import { MAX_CLUSTER_SECRETS, MIN_CLUSTER_SECRET_LENGTH } from '../http/peer-signature';

const TEN_MINUTES_MS = 600_000;

/**
 * Sequence mode's options with their defaults and ranges: part of `LEAF_OPTION_RULES`
 * (core/leaf-option-rules.ts), the one place every option's default and range is written.
 */
export const SEQUENCE_OPTION_RULES = {
  'sequence.coordination': {
    type: 'enum',
    values: ['zookeeper', 'database'],
    default: 'zookeeper',
    defaultNote: "`'zookeeper'` with `sequence.zookeeper`, else `'database'`",
    doc: 'Where the issuers are elected: ZooKeeper, or the database ranges come from.',
  },
  'sequence.database.leaseMs': {
    type: 'integer',
    default: 10_000,
    min: 2000,
    max: TEN_MINUTES_MS,
    rangeNote: '> lease margin + 2 heartbeats',
    doc: "How long an issuer row's claim holds: a dead issuer's replacement waits this long.",
  },
  'sequence.zookeeper.connect': {
    type: 'string',
    default: null,
    defaultNote: 'none: required with `sequence.coordination` `zookeeper`',
    rangeNote: '`host:port[,host:port…][/chroot]`',
    doc: 'ZooKeeper of the issuer election.',
  },
  'sequence.zookeeper.sessionTimeoutMs': {
    type: 'integer',
    default: 10_000,
    min: 2000,
    max: TEN_MINUTES_MS,
    rangeNote: '> lease margin + 2 heartbeats',
    doc: "The election's session timeout: a dead issuer's replacement waits this long.",
  },
  'sequence.advertise': {
    type: 'string',
    default: null,
    defaultNote: 'none: required when sequence mode is on',
    pattern: /^https?:\/\/[^\s/]+$/,
    rangeNote: '`http://host:port` (no path)',
    doc: 'The base URL other instances reach this one at.',
  },
  'sequence.groups': {
    type: 'integer',
    default: 4,
    min: 1,
    max: 1024,
    doc: 'Issuer groups; change only with every instance stopped.',
  },
  'sequence.leaseMarginMs': {
    type: 'integer',
    default: 2000,
    min: 0,
    max: TEN_MINUTES_MS,
    doc: 'An issuer stops this long before its election could pass on.',
  },
  'sequence.heartbeatIntervalMs': {
    type: 'integer',
    default: 500,
    min: 50,
    max: TEN_MINUTES_MS,
    doc: "Period of each group's election round.",
  },
  'sequence.waitMs': {
    type: 'integer',
    default: 3000,
    min: 0,
    max: TEN_MINUTES_MS,
    doc: 'How long a call waits for an issuer before `LEAF_SEQUENCE_NO_ISSUER`.',
  },
  'sequence.handOverAfterMs': {
    type: 'integer',
    default: 2000,
    min: 0,
    max: TEN_MINUTES_MS,
    doc: 'A dry issuer failing this long hands its group over.',
  },
  'sequence.clusterSecret': {
    type: 'list',
    default: [],
    defaultNote: 'none: the internal routes are open',
    minItemLength: MIN_CLUSTER_SECRET_LENGTH,
    maxItems: MAX_CLUSTER_SECRETS,
    rangeNote: `1 or ${MAX_CLUSTER_SECRETS} secrets of at least ${MIN_CLUSTER_SECRET_LENGTH} characters, the first signs`,
    doc: 'Signs the calls between instances (docs/security.md, "Peers").',
  },
  'sequence.forwardTimeoutMs': {
    type: 'integer',
    default: 1000,
    min: 10,
    max: TEN_MINUTES_MS,
    doc: 'Deadline of one forwarded batch to the issuer.',
  },
} as const satisfies Record<string, OptionRule>;
