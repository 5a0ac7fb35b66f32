import type { DataSource } from 'typeorm';
import { LeafConfigurationError } from '../../core/errors/leaf-configuration.error';
import { checkedOption as opt, LEAF_DEFAULTS } from '../../core/leaf-defaults';

/** The defaults of gapless series, read from their rules (`LEAF_OPTION_RULES`, `gapless.*`). */
export const GAPLESS_DEFAULTS = LEAF_DEFAULTS.gapless;

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
  /**
   * PostgreSQL: the longest a transaction holding a series' lock — `next`'s caller's, or a
   * group commit's — may sit idle before the server ends its session, rolling it back and
   * releasing the lock (`idle_in_transaction_session_timeout` for that transaction; a lower
   * one of the session's is kept), ms; 0 leaves the session's own. The caller's driver must
   * survive a session the server ended (docs/gapless.md, "In-transaction mode").
   * @default 0
   */
  idleInTransactionMs?: number;
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
 * Applies the defaults and checks every field against its rule.
 * @throws {LeafConfigurationError} listing every problem.
 */
export function resolveGaplessOptions(raw: LeafGaplessOptions): ResolvedGaplessOptions {
  const problems: string[] = [];
  if (!raw?.dataSource)
    problems.push('gapless.dataSource is required (MySQL/MariaDB or PostgreSQL)');
  // Every field but the data source has a rule (`gapless.*`), checked in the rules' order.
  const resolved = { dataSource: raw?.dataSource } as ResolvedGaplessOptions;
  for (const field of Object.keys(GAPLESS_DEFAULTS) as (keyof typeof GAPLESS_DEFAULTS)[])
    resolved[field] = opt(problems, `gapless.${field}`, raw?.[field]);
  if (resolved.defaultTtlMs > resolved.maxTtlMs)
    problems.push('gapless.defaultTtlMs must not exceed gapless.maxTtlMs');
  if (problems.length > 0) throw new LeafConfigurationError(problems);
  return resolved;
}
