/**
 * `nestjs-leaf/server`: what a Leaf server built on the library reads beyond an application's
 * needs (the server in this repository's `src/` is one): the option rules it turns into
 * environment variables and their reference page, the coordination it picks from them
 * (`coordinationPlan`), the resolved options, the guard of the
 * routes between sequence-mode instances and the largest batch they forward, the snowflake
 * layouts and worker listing for its CLI, and the checks its admin routes run at the door.
 * Supported, but shaped by the server's needs: read the CHANGELOG before upgrading.
 */
export { resolveLeafOptions } from './nest/leaf-options.resolver';
export type { ResolvedLeafOptions } from './nest/leaf-options.interface';
export { sequenceDatabaseProblem } from './nest/sequence/sequence-options.resolver';
export { LEAF_OPTION_RULES, type LeafOptionPath, type RuleValue } from './core/leaf-option-rules';
export { ruleProblem, type OptionRule } from './core/option-rule';
export { describeDefault, describeRange } from './core/option-rule.describe';
export {
  LEAF_ISSUER_ELECTION,
  LEAF_RESOLVED_OPTIONS,
  LEAF_WORKER_ID_SOURCE,
} from './nest/leaf.constants';
export type { IssuerElection } from './core/sequence/issuer-election.port';
export type { WorkerIdSource } from './core/snowflake/worker-id-source.port';
export { workerIdSource } from './nest/coordination.assembly';
export {
  COORDINATIONS,
  coordinationPlan,
  type Coordination,
  type CoordinationProblem,
} from './nest/coordination-plan.assembly';
export type { SequenceForwardedRange } from './nest/sequence/sequence.service';
export { MAX_FORWARD_ITEMS } from './core/sequence/forward-batcher';
export { SequencePeerGuard } from './nest/sequence/sequence-peer.guard';
export {
  JS_SAFE_EPOCH,
  SNOWFLAKE_LAYOUTS,
  type SnowflakeLayoutSpec,
} from './core/snowflake/snowflake-layout';
export {
  leaseRowWorkerInfo,
  type SnowflakeWorkerInfo,
  type WorkerAliveHolder,
} from './core/snowflake/worker-listing';
export { checkNewNumberFormat, checkNumberFormatUpdate } from './core/numbers/number-format';
export { decodeNumber } from './core/numbers/number-text';
export { assertValidKey, assertValidText } from './core/arguments';
export { createGaplessSeries } from './core/gapless/gapless-series';
export { verifyGaplessSeries } from './core/gapless/gapless-verify';
