import type { Problems } from './option-checks';
import { LEAF_OPTION_RULES, type LeafOptionPath, type RuleValue } from './leaf-option-rules';
import { checkedRule } from './option-rule';

const rules = LEAF_OPTION_RULES;

/**
 * The defaults as the nested shape of `LeafModuleOptions`, read from {@link LEAF_OPTION_RULES}
 * (options without a constant default are left out).
 */
export const LEAF_DEFAULTS = {
  name: rules.name.default,
  maxBatchSize: rules.maxBatchSize.default,
  segment: {
    maxStep: rules['segment.maxStep'].default,
    stepDurationMs: rules['segment.stepDurationMs'].default,
    refreshIntervalMs: rules['segment.refreshIntervalMs'].default,
    loadTimeoutMs: rules['segment.loadTimeoutMs'].default,
    preloadThreshold: rules['segment.preloadThreshold'].default,
    maxConcurrentLoads: rules['segment.maxConcurrentLoads'].default,
    warmTags: rules['segment.warmTags'].default,
    readinessRunwayMs: rules['segment.readinessRunwayMs'].default,
    handBackOnClose: rules['segment.handBackOnClose'].default,
    databaseTimeoutMs: rules['segment.databaseTimeoutMs'].default,
    highWater: {
      sessionTimeoutMs: rules['segment.highWater.sessionTimeoutMs'].default,
      callTimeoutMs: rules['segment.highWater.callTimeoutMs'].default,
    },
  },
  snowflake: {
    layout: rules['snowflake.layout'].default,
    dataCenterId: rules['snowflake.dataCenterId'].default,
    stateDir: rules['snowflake.stateDir'].default,
    sequenceRandomBound: rules['snowflake.sequenceRandomBound'].default,
    clockBackwardsToleranceMs: rules['snowflake.clockBackwardsToleranceMs'].default,
    heartbeatIntervalMs: rules['snowflake.heartbeatIntervalMs'].default,
    leaseMs: rules['snowflake.leaseMs'].default,
    localRunwayMs: rules['snowflake.localRunwayMs'].default,
    startupMaxWaitMs: rules['snowflake.startupMaxWaitMs'].default,
    zookeeper: {
      sessionTimeoutMs: rules['snowflake.zookeeper.sessionTimeoutMs'].default,
      connectTimeoutMs: rules['snowflake.zookeeper.connectTimeoutMs'].default,
      reclaim: rules['snowflake.zookeeper.reclaim'].default,
      reclaimMarginMs: rules['snowflake.zookeeper.reclaimMarginMs'].default,
    },
    ordinal: { offset: rules['snowflake.ordinal.offset'].default },
  },
  sequence: {
    groups: rules['sequence.groups'].default,
    leaseMarginMs: rules['sequence.leaseMarginMs'].default,
    heartbeatIntervalMs: rules['sequence.heartbeatIntervalMs'].default,
    waitMs: rules['sequence.waitMs'].default,
    forwardTimeoutMs: rules['sequence.forwardTimeoutMs'].default,
    handOverAfterMs: rules['sequence.handOverAfterMs'].default,
    coordination: rules['sequence.coordination'].default,
    zookeeper: { sessionTimeoutMs: rules['sequence.zookeeper.sessionTimeoutMs'].default },
    database: { leaseMs: rules['sequence.database.leaseMs'].default },
  },
} as const;

/**
 * Checks `value` against the rule of `path`: `undefined` gives the rule's default (or
 * `fallback` where the default is derived); a value out of range records a problem, named
 * `label` (the option path, or the environment variable that set it), and gives the default.
 */
export function checkedOption<P extends LeafOptionPath>(
  problems: Problems,
  path: P,
  value: unknown,
  options: { label?: string; fallback?: RuleValue<P>; max?: number } = {},
): RuleValue<P> {
  return checkedRule(problems, options.label ?? path, LEAF_OPTION_RULES[path], value, options);
}
