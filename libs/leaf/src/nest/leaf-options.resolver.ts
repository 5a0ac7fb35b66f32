import { systemClock } from '../core/clock';
import { LeafConfigurationError } from '../core/errors/leaf-configuration.error';
import { checkedOption as opt } from '../core/leaf-defaults';
import type { Problems } from '../core/option-checks';
import { DEFAULT_SNOWFLAKE_EPOCH } from '../core/snowflake/snowflake-layout';
import type { LeafModuleOptions, ResolvedLeafOptions } from './leaf-options.interface';
import { resolveSegment } from './segment/segment-options.resolver';
import { resolveSequence } from './sequence/sequence-options.resolver';
import { resolveSnowflake } from './snowflake/snowflake-options.resolver';

/**
 * Applies defaults to raw module options and validates all of them.
 *
 * @throws {LeafConfigurationError} listing every problem found, not just the first.
 */
export function resolveLeafOptions(raw: LeafModuleOptions = {}): ResolvedLeafOptions {
  const problems: Problems = [];
  const clock = raw.clock ?? systemClock;
  const resolved: ResolvedLeafOptions = {
    name: opt(problems, 'name', raw.name),
    clock,
    maxBatchSize: opt(problems, 'maxBatchSize', raw.maxBatchSize),
    segment: resolveSegment(problems, raw.segment),
    snowflake: resolveSnowflake(
      problems,
      raw.snowflake,
      clock.now(),
      (raw.segment && raw.segment.dataSource) || null,
    ),
    sequence: null,
  };
  const sequence = resolveSequence(problems, raw.sequence, resolved.segment);
  if (problems.length > 0) throw new LeafConfigurationError(problems);
  return { ...resolved, sequence };
}

export { DEFAULT_SNOWFLAKE_EPOCH };
