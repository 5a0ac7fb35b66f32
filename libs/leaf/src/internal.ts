/**
 * `nestjs-leaf/internal`: NOT part of the public API. What the Leaf server application (this
 * repository's `src/`) reads from the library beyond a user's needs — the option rules it
 * turns into environment variables and docs, the injection tokens, the route paths between
 * instances, the snowflake layout table. Any release may change it without notice.
 */
export { resolveLeafOptions } from './nest/leaf-options.resolver';
export type {
  ResolvedLeafOptions,
  ResolvedSegmentOptions,
  ResolvedSequenceOptions,
  ResolvedSnowflakeOptions,
} from './nest/leaf-options.interface';
export { sequenceDatabaseProblem } from './nest/sequence/sequence-options.resolver';
export { LEAF_DEFAULTS } from './core/leaf-defaults';
export {
  LEAF_OPTION_RULES,
  SNOWFLAKE_LAYOUT_NAMES,
  WORKER_RECLAIM_MODES,
  type LeafOptionPath,
  type RuleValue,
} from './core/leaf-option-rules';
export {
  ruleProblem,
  type BooleanRule,
  type EnumRule,
  type FractionRule,
  type IntegerRule,
  type ListRule,
  type OptionRule,
  type StringRule,
} from './core/option-rule';
export { describeDefault, describeRange } from './core/option-rule.describe';
export {
  LEAF_ALLOC_STORE,
  LEAF_JOB_NAMES,
  LEAF_NUMBER_FORMAT_STORE,
  LEAF_RESOLVED_OPTIONS,
  LEAF_SEQUENCE_TRANSPORT,
  LEAF_ZK_CLIENT_FACTORY,
} from './nest/leaf.constants';
export { EmbeddedIdService } from './nest/embedded-id.service';
export type { HighWaterStatus, SegmentCacheSnapshot } from './nest/segment/segment.service';
export type { SegmentBufferState } from './nest/segment/segment-admin.service';
export { MAX_TAG_DESCRIPTION, MAX_TAG_STEP } from './core/segment/tag-definition';
export type { SequenceForwardedRange } from './nest/sequence/sequence.service';
export {
  MAX_FORWARD_COUNT,
  MAX_FORWARD_ITEMS,
  type ForwardItem,
  type ForwardResult,
  type SequenceForwardTransport,
} from './core/sequence/forward-batcher';
export type { SequenceGroupSnapshot, SequenceGroupState } from './core/sequence/sequence-group';
export {
  SEQUENCE_FORWARD_PATH,
  SEQUENCE_PROBE_PATH,
} from './adapters/http/sequence-forward.transport';
export { SequencePeerGuard } from './nest/sequence/sequence-peer.guard';
export { SequencePeerAuth } from './nest/sequence/sequence-peer-auth';
export { PEER_HEADERS, PEER_WINDOW_MS, PeerSigner } from './core/http/peer-signature';
export {
  PEER_REPLAY_CAPACITY,
  PeerVerifier,
  type PeerRequest,
  type PeerVerdict,
} from './core/http/peer-verifier';
export { LeafEventRecorder } from './nest/metrics/leaf-event.recorder';
export {
  JS_SAFE_EPOCH,
  JS_SAFE_LAYOUT,
  LEAF_LAYOUT,
  SNOWFLAKE_LAYOUTS,
  layoutProblems,
  type SnowflakeLayoutSpec,
} from './core/snowflake/snowflake-layout';
export { snowflakeLayoutOf, type WorkerReclaimMode } from './core/snowflake/snowflake-settings';
export {
  leaseRowWorkerInfo,
  listSnowflakeWorkers,
  type SnowflakeWorkerInfo,
  type WorkerAliveHolder,
} from './core/snowflake/worker-listing';
export { leafErrorBody, leafErrorStatus } from './nest/http/leaf-exception.filter';
export { MAX_INT64 } from './core/segment/leaf-alloc-store.port';
export {
  checkNewNumberFormat,
  checkNumberFormatUpdate,
  MAX_NUMBER_WIDTH,
  NUMBER_DATE_PATTERNS,
  NUMBER_MODES,
  NUMBER_RESETS,
  NUMBER_SEPARATORS,
} from './core/numbers/number-format';
export { decodeNumber } from './core/numbers/number-text';
export { assertValidKey, assertValidText, KEY_PATTERN } from './core/arguments';
export { createGaplessSeries } from './core/gapless/gapless-series';
export { verifyGaplessSeries } from './core/gapless/gapless-verify';
export {
  assertGaplessReason,
  assertGaplessTtl,
  gaplessNumberArgument,
} from './core/gapless/gapless-arguments';
