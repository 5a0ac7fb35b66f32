import type { DataSource } from 'typeorm';
import { LeafConfigurationError } from '../../core/errors/leaf-configuration.error';

/**
 * The defaults of gapless series (docs/gapless.md, "Design"), in one place: the resolver
 * applies them and the `@default` tags below state them.
 */
export const GAPLESS_DEFAULTS = {
  defaultTtlMs: 300_000,
  maxTtlMs: 86_400_000,
  lockWaitMs: 2000,
  maxBatch: 500,
  sweepIntervalMs: 5000,
  sweepLimit: 1000,
} as const;

/** `LeafModule`'s `gapless` option: gapless series on one database. */
export interface LeafGaplessOptions {
  /**
   * An initialized TypeORM DataSource on MySQL/MariaDB or PostgreSQL whose database has the
   * `leaf_gapless_*` tables (migration `CreateLeafGapless1700000000007`, in `LEAF_MIGRATIONS`).
   * The caller owns its lifecycle.
   */
  dataSource: DataSource;
  /** TTL of a reservation when `reserve` is given none, ms. @default 300000 */
  defaultTtlMs?: number;
  /** Longest TTL `reserve` accepts, ms. @default 86400000 */
  maxTtlMs?: number;
  /** Longest wait for a series' lock, ms (MySQL/MariaDB: whole seconds, rounded up). @default 2000 */
  lockWaitMs?: number;
  /** Most requests of one series in one transaction. @default 500 */
  maxBatch?: number;
  /** How often this instance voids the expired reservations of every series, ms. @default 5000 */
  sweepIntervalMs?: number;
  /** Most reservations voided per series per sweep transaction. @default 1000 */
  sweepLimit?: number;
}

/** {@link LeafGaplessOptions} after defaults and validation. */
export type ResolvedGaplessOptions = Required<LeafGaplessOptions>;

/**
 * Applies the defaults and checks every field.
 * @throws {LeafConfigurationError} listing every problem.
 */
export function resolveGaplessOptions(raw: LeafGaplessOptions): ResolvedGaplessOptions {
  const problems: string[] = [];
  if (!raw?.dataSource)
    problems.push('gapless.dataSource is required (MySQL/MariaDB or PostgreSQL)');
  const resolved = { ...GAPLESS_DEFAULTS, ...withoutUndefined(raw) } as ResolvedGaplessOptions;
  for (const field of Object.keys(GAPLESS_DEFAULTS) as Array<keyof typeof GAPLESS_DEFAULTS>) {
    const value = resolved[field];
    if (!Number.isSafeInteger(value) || value < 1)
      problems.push(`gapless.${field} must be a positive integer, not ${String(value)}`);
  }
  if (resolved.defaultTtlMs > resolved.maxTtlMs)
    problems.push('gapless.defaultTtlMs must not exceed gapless.maxTtlMs');
  if (problems.length > 0) throw new LeafConfigurationError(problems);
  return resolved;
}

function withoutUndefined<T extends object>(raw: T): Partial<T> {
  return Object.fromEntries(
    Object.entries(raw ?? {}).filter(([, v]) => v !== undefined),
  ) as Partial<T>;
}
