import { Column, Entity, PrimaryColumn, type ValueTransformer } from 'typeorm';

/**
 * bigint in code, decimal string in the driver (mysql2 with `bigNumberStrings`). A driver
 * configured to return plain numbers would round values above 2^53 — and rounded ranges
 * overlap — so an unsafe number is refused instead of converted.
 */
export const bigintTransformer: ValueTransformer = {
  to: (value: bigint | undefined | null) =>
    value === undefined || value === null ? value : value.toString(),
  from: (value: string | number | bigint | null) => {
    if (value === null) return null;
    if (typeof value === 'number' && !Number.isSafeInteger(value)) {
      throw new Error(
        `leaf_alloc.max_id arrived as the unsafe number ${value}: configure the DataSource with supportBigNumbers and bigNumberStrings`,
      );
    }
    return BigInt(value);
  },
};

/**
 * One business tag of segment mode: Leaf's `leaf_alloc` table, one row per tag.
 * The schema is created by the library's migrations (`LEAF_MIGRATIONS`), never by
 * `synchronize`: the entity opts out of it, so an application's `synchronize: true` never
 * alters `leaf_alloc`.
 */
@Entity({ name: 'leaf_alloc', synchronize: false })
export class LeafAllocEntity {
  /** Namespace of the IDs, e.g. `order-internal`. */
  @PrimaryColumn({ name: 'biz_tag', type: 'varchar', length: 128 })
  tag!: string;

  /** Exclusive upper bound of every ID handed out so far. */
  @Column({ name: 'max_id', type: 'bigint', default: 1, transformer: bigintTransformer })
  maxId!: bigint;

  /** Base length of a range. */
  @Column({ name: 'step', type: 'int' })
  step!: number;

  /** Free text. */
  @Column({ name: 'description', type: 'varchar', length: 256, nullable: true })
  description!: string | null;

  /**
   * Time of the last allocation. The table's column is a `timestamp`; `Date` here lets each
   * driver name its own type (SQLite's rejects `timestamp`, PostgreSQL's `datetime`; the
   * schema comes from migrations, not from this).
   */
  @Column({ name: 'update_time', type: Date, nullable: true })
  updateTime!: Date | null;
}
