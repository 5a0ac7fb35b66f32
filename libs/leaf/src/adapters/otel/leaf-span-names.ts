/** The instrumentation scope (tracer name) of Leaf's spans. */
export const LEAF_TRACER_NAME = 'nestjs-leaf';

/**
 * The names of Leaf's spans (stable: dashboards and alerts may rely on them). Each is
 * recorded where the operation completes, with its measured start and end, never per ID.
 */
export const LEAF_SPAN_NAMES = {
  /** One range allocation in the database (a segment tag, or a sequence key's issuer load). */
  allocate: 'leaf.segment.allocate',
  /** One snowflake time-lease extension (the worker-ID lease: ZooKeeper node or database row, and the state file). */
  leaseExtend: 'leaf.snowflake.lease.extend',
  /** This instance became the issuer of a sequence group (a span of zero duration). */
  elected: 'leaf.sequence.elected',
  /** This instance stopped issuing for a sequence group (a span of zero duration). */
  demoted: 'leaf.sequence.demoted',
  /** One batch of sequence calls forwarded to another instance's issuer. */
  forward: 'leaf.sequence.forward',
} as const;

/** The attributes Leaf's spans carry. IDs and range bounds are decimal strings. */
export const LEAF_SPAN_ATTRIBUTES = {
  /** `segment` or `sequence` (on `leaf.segment.allocate`). */
  mode: 'leaf.mode',
  /** The tag (segment) or key (sequence) allocated. */
  tag: 'leaf.tag',
  /** The step asked for (absent: the row's own step). */
  step: 'leaf.step',
  /** First ID of the allocated range, decimal string. */
  rangeStart: 'leaf.range.start',
  /** End of the allocated range (exclusive), decimal string. */
  rangeEnd: 'leaf.range.end',
  /** `ok`, `degraded` (durable locally only) or `error` (on `leaf.snowflake.lease.extend`). */
  leaseOutcome: 'leaf.lease.outcome',
  /** The sequence group. */
  group: 'leaf.sequence.group',
  /** The issuing term (on `leaf.sequence.elected`). */
  term: 'leaf.sequence.term',
  /** Why this instance stopped issuing (on `leaf.sequence.demoted`). */
  reason: 'leaf.sequence.reason',
  /** The issuer's advertised address (on `leaf.sequence.forward`). */
  issuer: 'leaf.sequence.issuer',
  /** Calls coalesced into the forwarded batch. */
  calls: 'leaf.sequence.calls',
  /** Keys (items) in the forwarded batch. */
  items: 'leaf.sequence.items',
  /** The `LeafError` code of a failed operation (`LEAF_...`), or `UNKNOWN`. */
  errorCode: 'leaf.error.code',
} as const;
