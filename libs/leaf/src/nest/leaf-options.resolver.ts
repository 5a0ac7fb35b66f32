import { hostname } from 'node:os';
import { systemClock } from '../core/clock';
import { LeafConfigurationError } from '../core/errors/leaf-configuration.error';
import { OPAQUE_KEY_NOTE, OpaqueIds } from '../core/formats/opaque-ids';
import { checkedOption as opt } from '../core/leaf-defaults';
import type { Problems } from '../core/option-rule';
import type {
  LeafModuleOptions,
  ResolvedJournalOptions,
  ResolvedLeafOptions,
} from './leaf-options.interface';
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
  const name = opt(problems, 'name', raw.name);
  const maxBatchSize = opt(problems, 'maxBatchSize', raw.maxBatchSize);
  const segment = resolveSegment(problems, raw.segment);
  const snowflake = resolveSnowflake(
    problems,
    raw.snowflake,
    clock.now(),
    (raw.segment && raw.segment.dataSource) || null,
  );
  const journal = resolveJournal(problems, raw);
  const resolved: ResolvedLeafOptions = {
    name,
    clock,
    maxBatchSize,
    journal,
    segment,
    snowflake,
    sequence: null,
    opaque: resolveOpaque(problems, raw.opaque?.keys),
  };
  const sequence = resolveSequence(problems, raw.sequence, resolved.segment);
  if (problems.length > 0) throw new LeafConfigurationError(problems);
  return { ...resolved, sequence };
}

/**
 * `opaque.keys` as a key ring (`null`: none given); a problem names a key by its place, never
 * by its value.
 */
function resolveOpaque(problems: Problems, keys: readonly string[] | undefined): OpaqueIds | null {
  if (keys === undefined || (Array.isArray(keys) && keys.length === 0)) return null;
  try {
    if (!Array.isArray(keys) || !keys.every((key) => typeof key === 'string')) {
      throw new LeafConfigurationError([`opaque.keys must be a list of ${OPAQUE_KEY_NOTE}`]);
    }
    return OpaqueIds.fromEntries(keys);
  } catch (error) {
    if (!(error instanceof LeafConfigurationError)) throw error;
    problems.push(...error.problems);
    return null;
  }
}

/**
 * `journal` and `instance`: the instance's identity is the option, else the identity the
 * instance already advertises (snowflake's `ip:port`, sequence's `host:port`), else the host
 * name. `null` when the journal is off.
 */
function resolveJournal(problems: Problems, raw: LeafModuleOptions): ResolvedJournalOptions | null {
  const instance = opt(problems, 'instance', raw.instance, { fallback: '' });
  if (!opt(problems, 'journal', raw.journal)) return null;
  const snowflake = raw.snowflake ? raw.snowflake.advertise?.trim() : undefined;
  const sequence = raw.sequence ? raw.sequence.advertise?.trim() : undefined;
  return {
    instance:
      instance ||
      snowflake ||
      (sequence ? sequence.replace(/^https?:\/\//, '') : '') ||
      hostname().slice(0, 255),
  };
}
