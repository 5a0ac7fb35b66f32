import { checkedOption as opt } from '../../core/leaf-defaults';
import { resolveSequenceCoordination } from '../coordination.assembly';
import { LEAF_OPTION_RULES } from '../../core/leaf-option-rules';
import { ruleProblem, type Problems } from '../../core/option-rule';
import type { OneAllocation, ResolvedSegmentOptions } from '../leaf-options.interface';
import type {
  LeafSequenceOptions,
  LeafSequenceTlsOptions,
  ResolvedSequenceOptions,
} from '../sequence-options.interface';

/**
 * The rule between sequence mode and its databases, for the resolver and for configuration
 * front ends (the application checks its environment with it): sequence mode takes its ranges
 * from exactly one database, its own or segment mode's. Each database's ranges lie above its
 * own earlier ones only, so with several a successor's first range could be below IDs already
 * issued (docs/design.md, "Sequence mode").
 * @returns the problem, or null when one database (`databases`: none, one or several) suits.
 */
export function sequenceDatabaseProblem(databases: 'none' | 'one' | 'several'): string | null {
  if (databases === 'none') {
    return 'sequence mode takes its ranges from one database: give sequence.dataSource or sequence.store, or enable segment mode with one';
  }
  if (databases === 'several') {
    return 'sequence mode needs one database (segment `dataSource` or `store`): with several, a new issuer’s first range is above only its own database’s earlier ranges';
  }
  return null;
}

/**
 * Sequence mode's options with their defaults applied, its database checked
 * ({@link sequenceDatabaseProblem}); a problem found is added to `problems`.
 * @returns `null` when sequence mode is off.
 */
export function resolveSequence(
  problems: Problems,
  raw: LeafSequenceOptions | false | undefined,
  segment: ResolvedSegmentOptions | null,
): ResolvedSequenceOptions | null {
  if (raw === undefined || raw === false || raw.enabled === false) return null;
  const { allocation, problem } = sequenceAllocation(raw, segment);
  if (problem !== null) problems.push(problem);
  const { coordination, connect, sessionTimeoutMs, leaseOption } = resolveSequenceCoordination(
    problems,
    raw,
    problem === null ? allocation : null,
  );
  const advertise = opt(problems, 'sequence.advertise', raw.advertise, { fallback: '' });
  if (advertise === '' && raw.advertise === undefined)
    problems.push('sequence.advertise ("http://host:port") is required');
  const resolved: ResolvedSequenceOptions = {
    // With problems, the caller throws before anything reads this.
    allocation: allocation!,
    coordination,
    connect,
    sessionTimeoutMs,
    advertise,
    groups: opt(problems, 'sequence.groups', raw.groups),
    leaseMarginMs: opt(problems, 'sequence.leaseMarginMs', raw.leaseMarginMs),
    heartbeatIntervalMs: opt(problems, 'sequence.heartbeatIntervalMs', raw.heartbeatIntervalMs),
    waitMs: opt(problems, 'sequence.waitMs', raw.waitMs),
    forwardTimeoutMs: opt(problems, 'sequence.forwardTimeoutMs', raw.forwardTimeoutMs),
    handOverAfterMs: opt(problems, 'sequence.handOverAfterMs', raw.handOverAfterMs),
    clusterSecret: clusterSecret(problems, raw.clusterSecret),
    tls: sequenceTls(problems, raw.tls, advertise),
  };
  const { leaseMarginMs, heartbeatIntervalMs } = resolved;
  if (sessionTimeoutMs <= leaseMarginMs + 2 * heartbeatIntervalMs) {
    problems.push(
      `${leaseOption} (${sessionTimeoutMs}) must exceed sequence.leaseMarginMs (${leaseMarginMs}) + 2 × sequence.heartbeatIntervalMs (${heartbeatIntervalMs}), or the lease runs out between heartbeats`,
    );
  }
  return resolved;
}

/**
 * The one database sequence mode takes its ranges from: `sequence.dataSource` / `store`, else
 * segment mode's; with segment mode on, only segment mode's (one `leaf_alloc` for both).
 */
function sequenceAllocation(raw: LeafSequenceOptions, segment: ResolvedSegmentOptions | null) {
  const refused = (problem: string | null) => ({ allocation: null, problem });
  const given = raw.store ?? raw.dataSource;
  if (raw.store !== undefined && raw.dataSource !== undefined)
    return refused('sequence: `dataSource` and `store` are exclusive: give one database');
  if (segment === null) {
    if (given === undefined) return refused(sequenceDatabaseProblem('none'));
    const allocation: OneAllocation = raw.store
      ? { kind: 'store', store: raw.store }
      : { kind: 'dataSource', dataSource: raw.dataSource! };
    return { allocation, problem: null };
  }
  const shared = segment.allocation;
  if (shared.kind === 'several') return refused(sequenceDatabaseProblem('several'));
  if (given !== undefined && given !== (shared.kind === 'store' ? shared.store : shared.dataSource))
    return refused(
      "sequence.dataSource / sequence.store: with segment mode on, sequence mode takes its ranges from segment mode's database: leave them out, or turn segment mode off",
    );
  return { allocation: shared, problem: null };
}

/**
 * `sequence.clusterSecret` as a list (one string is one secret), checked against its rule; a
 * problem never repeats the value.
 */
function clusterSecret(problems: Problems, raw: string | readonly string[] | undefined) {
  if (raw === undefined) return [];
  const secrets = typeof raw === 'string' ? [raw] : raw;
  const rule = LEAF_OPTION_RULES['sequence.clusterSecret'];
  if (!Array.isArray(secrets) || secrets.length === 0 || ruleProblem(rule, secrets) !== null) {
    problems.push(`sequence.clusterSecret must be ${rule.rangeNote}`);
    return [];
  }
  return [...secrets];
}

/**
 * `sequence.tls`, complete (certificate, key and CA), with an `https://` advertised address
 * (the others call this one there); null when not given.
 */
function sequenceTls(
  problems: Problems,
  raw: LeafSequenceTlsOptions | undefined,
  advertise: string,
): LeafSequenceTlsOptions | null {
  if (raw === undefined) return null;
  const missing = (['cert', 'key', 'ca'] as const).filter((part) => {
    const value: unknown = raw[part];
    return !(typeof value === 'string' || Buffer.isBuffer(value)) || value.length === 0;
  });
  if (missing.length > 0) {
    problems.push(`sequence.tls needs a PEM ${missing.join(', ')}`);
    return null;
  }
  if (!advertise.startsWith('https://')) {
    problems.push(
      'sequence.tls: sequence.advertise must be an https:// address (the TLS listener)',
    );
  }
  return raw;
}
