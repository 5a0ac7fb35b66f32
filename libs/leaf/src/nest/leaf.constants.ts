/** Injection token of the resolved options ({@link ResolvedLeafOptions}). */
export const LEAF_RESOLVED_OPTIONS = Symbol('LEAF_RESOLVED_OPTIONS');
/** Injection token of the modes `LeafModule` registered (`LeafMode[]`; internal). */
export const LEAF_MODES = Symbol('LEAF_MODES');
/** Injection token of the segment allocation store ({@link LeafAllocStore}); registered with segment mode. */
export const LEAF_ALLOC_STORE = Symbol('LEAF_ALLOC_STORE');
/**
 * Injection token of the business-number formats' store and clock (`NumberFormatStore`), built
 * on segment mode's `dataSource`; `null` with a custom store or several databases.
 */
export const LEAF_NUMBER_FORMAT_STORE = Symbol('LEAF_NUMBER_FORMAT_STORE');
/** Injection token of gapless series' resolved options (`ResolvedGaplessOptions`; internal). */
export const LEAF_GAPLESS_OPTIONS = Symbol('LEAF_GAPLESS_OPTIONS');
/** Injection token of gapless series' store (`TypeormGaplessStore`; internal). */
export const LEAF_GAPLESS_STORE = Symbol('LEAF_GAPLESS_STORE');
/** Injection token of the factory of snowflake mode's ZooKeeper client (`ZkClientFactory`). */
export const LEAF_ZK_CLIENT_FACTORY = Symbol('LEAF_ZK_CLIENT_FACTORY');
/**
 * Injection token of the segment high-water mark's adapter, recorded (`SegmentHighWater`),
 * `null` without `segment.highWater` (internal).
 */
export const LEAF_SEGMENT_HIGH_WATER = Symbol('LEAF_SEGMENT_HIGH_WATER');
/** Injection token of snowflake mode's worker-ID source (`WorkerIdSource`; internal). */
export const LEAF_WORKER_ID_SOURCE = Symbol('LEAF_WORKER_ID_SOURCE');
/** Injection token of snowflake mode's region registry (`null` without `snowflake.region`). */
export const LEAF_REGION_REGISTRY = Symbol('LEAF_REGION_REGISTRY');
/** Injection token of sequence mode's issuer election (`IssuerElection`; internal). */
export const LEAF_ISSUER_ELECTION = Symbol('LEAF_ISSUER_ELECTION');
/**
 * Injection token of sequence mode's forwarding transport (`SequenceForwardTransport`);
 * optional: tests provide a fake, the default is keep-alive HTTP.
 */
export const LEAF_SEQUENCE_TRANSPORT = Symbol('LEAF_SEQUENCE_TRANSPORT');
/** Injection token of the `SchedulerRegistry` the jobs use (checked to exist; internal). */
export const LEAF_SCHEDULER = Symbol('LEAF_SCHEDULER');
/** Names of the jobs registered in `SchedulerRegistry`, prefixed with the module's `name`. */
export const LEAF_JOB_NAMES = {
  segmentRefresh: (name: string) => `leaf:${name}:segment:refresh`,
  /** Retries of the first tag-list load (with back-off) while the database is unreachable. */
  segmentJoin: (name: string) => `leaf:${name}:segment:join`,
  /** Samples the per-tag issue rate behind the readiness runway. */
  segmentRate: (name: string) => `leaf:${name}:segment:rate`,
  snowflakeHeartbeat: (name: string) => `leaf:${name}:snowflake:heartbeat`,
  /** Renews the region's lease on the data-centre ID. */
  snowflakeRegion: (name: string) => `leaf:${name}:snowflake:region`,
  /** Sequence mode's election rounds (every group's heartbeat / look at the issuer). */
  sequenceElection: (name: string) => `leaf:${name}:sequence:election`,
  /** Voids the gapless reservations past their TTL. */
  gaplessSweep: (name: string) => `leaf:${name}:gapless:sweep`,
} as const;
