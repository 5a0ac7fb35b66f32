import { LEAF_DEFAULTS } from '../leaf-defaults';
import { LEAF_MODE_NAMES } from '../id.service';

/**
 * The largest `getIds` count an ORM integration asks its ID source for at once unless told
 * otherwise: `LeafModule`'s own `maxBatchSize` default, so that a bulk insert never asks for
 * more than the default source serves.
 */
export const DEFAULT_ORM_MAX_BATCH_SIZE: number = LEAF_DEFAULTS.maxBatchSize;

/** What is wrong with an ORM integration's `maxBatchSize` (nothing: an empty list). */
export function maxBatchSizeProblems(max: unknown): string[] {
  return Number.isInteger(max) && (max as number) >= 1
    ? []
    : [`maxBatchSize must be a positive integer, not ${String(max)}`];
}

/**
 * What is wrong with the `mode` and `key` an ORM integration was given for one ID column or
 * model, `where` naming it in each message (`@LeafIdColumn`, `models.Order`).
 */
export function idSourceProblems(
  where: string,
  given: { mode?: unknown; key?: unknown },
): string[] {
  const problems: string[] = [];
  if (given.mode !== undefined && !(LEAF_MODE_NAMES as readonly unknown[]).includes(given.mode))
    problems.push(
      `${where} mode must be segment, snowflake or sequence, not ${String(given.mode)}`,
    );
  if (given.key !== undefined && (typeof given.key !== 'string' || given.key.length === 0))
    problems.push(`${where} key must not be empty`);
  return problems;
}
