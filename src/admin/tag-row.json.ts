import type { LeafAllocRow } from 'nestjs-leaf/ports';

/** A `leaf_alloc` row on the wire, in Leaf's column names, `max_id` as a decimal string. */
export interface TagRowJson {
  biz_tag: string;
  max_id: string;
  step: number;
  description: string | null;
  update_time: string | null;
}

/** The columns of a row in Leaf's names, in its order (the CLI's table, `/db`'s page). */
export const TAG_ROW_COLUMNS = ['biz_tag', 'max_id', 'step', 'description', 'update_time'] as const;

/**
 * A step as the store takes it: the store refuses (and names) anything outside 1..2^31-1; 0
 * stands for that here (admin routes and CLI).
 */
export const stepNumber = (step: bigint): number =>
  step >= 1n && step <= 2_147_483_647n ? Number(step) : 0;

/** The JSON of a row: shared by the admin routes and the CLI. */
export function tagRowJson(row: LeafAllocRow): TagRowJson {
  return {
    biz_tag: row.tag,
    max_id: row.maxId.toString(),
    step: row.step,
    description: row.description,
    update_time: row.updateTime?.toISOString() ?? null,
  };
}
