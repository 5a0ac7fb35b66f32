import type { HighWaterRepair } from './high-water';

/** One row of `leaf_alloc`, as the monitoring page shows it. */
export interface LeafAllocRow {
  readonly tag: string;
  readonly maxId: bigint;
  readonly step: number;
  readonly description: string | null;
  readonly updateTime: Date | null;
  /**
   * The row's residue class (`id_modulus`, `id_residue`), read only by stores serving several
   * databases per tag (docs/design.md, "Several databases per tag"); absent: every ID.
   */
  readonly modulus?: number;
  readonly residue?: number;
  /** The database the row was read from, when several serve the tags (its display name). */
  readonly source?: string;
}

/** A tag to create: a new `leaf_alloc` row. */
export interface NewTag {
  readonly tag: string;
  /** The first ID the tag hands out; default 1 (Leaf's default). Must be in 1..2^63-1. */
  readonly maxId?: bigint;
  /** The row's base step, 1..2^31-1. */
  readonly step: number;
  readonly description?: string | null;
}

/** What may change on an existing tag. `max_id` is deliberately not here: it never moves back. */
export interface TagUpdate {
  readonly step?: number;
  readonly description?: string | null;
}

/** The outcome of one committed allocation: the caller owns `[maxId - appliedStep, maxId)`. */
export interface AllocatedRange {
  readonly tag: string;
  /** `max_id` after the update, read back inside the same transaction. */
  readonly maxId: bigint;
  /** The row's `step` column (the base step of the dynamic step policy). */
  readonly baseStep: number;
  /** The step actually added to `max_id` by this allocation. */
  readonly appliedStep: number;
  /**
   * Set when the store found `max_id` below the tag's high-water mark and started this range
   * at the mark instead (the repair, in the same transaction). Absent without a mark.
   */
  readonly repair?: HighWaterRepair | null;
  /**
   * The residue class of the row, read in the same transaction: only the IDs `x` of the range
   * with `x ≡ residue (mod modulus)` are served. Absent: every ID (one database).
   */
  readonly modulus?: number;
  readonly residue?: number;
  /** Which database granted it, when several serve the tag (its index in the list). */
  readonly source?: number;
}

/**
 * The fence of a sequence issuer's allocation (docs/design.md, "Sequence mode on the
 * database"): the range is granted only if, in the same transaction, the row of `group` in
 * `leaf_sequence_issuer` still names `holder` in `term`.
 */
export interface IssuerFence {
  /** The service name (`LeafModuleOptions.name`), the row's `name`. */
  readonly name: string;
  readonly group: number;
  /** The issuing process (its run ID). */
  readonly holder: string;
  readonly term: bigint;
}

/**
 * What the ID journal records with a range (docs/design.md, "The ID journal"): given to
 * {@link LeafAllocStore.allocate}, written in the allocation's own transaction.
 */
export interface RangeJournalEntry {
  /** The mode the range is granted to. */
  readonly mode: 'segment' | 'sequence';
  /** The instance's identity (`LeafModuleOptions.instance`). */
  readonly instance: string;
  /** The sequence issuer's term under the database election; `null` otherwise. */
  readonly term: bigint | null;
}

/** One range of the ID journal (`leaf_alloc_journal`): who was granted `[start, end)` of a tag. */
export interface RangeGrant extends RangeJournalEntry {
  readonly tag: string;
  readonly start: bigint;
  /** Exclusive. */
  readonly end: bigint;
  /** When the allocation was made (the granting process's clock, just before its commit). */
  readonly grantedAt: Date | null;
  /** The residue class served from the range (several databases per tag); absent: every ID. */
  readonly modulus?: number;
  readonly residue?: number;
  /** Which database granted it, when several serve the tag (its display name). */
  readonly source?: string;
}

/**
 * Where segment ranges come from: one real adapter per database family, plus an
 * in-memory fake for unit tests. Implementations must serialise allocations of one tag
 * (row lock or a serialised write transaction) and never lower `max_id`.
 */
export interface LeafAllocStore {
  /**
   * All business tags in the table.
   * @throws {AllocationError} when the table cannot be read (tag `*`).
   */
  listTags(): Promise<string[]>;
  /**
   * Every row, for monitoring.
   * @throws {AllocationError} when the table cannot be read (tag `*`).
   */
  listAll(): Promise<LeafAllocRow[]>;
  /**
   * Atomically advances `max_id` of `tag` by `step` (default: the row's `step`) and
   * returns the new value read in the same transaction.
   * With `journal`, a row of the ID journal is written in the same transaction (a store
   * without a journal ignores it): no range is granted without its row, and no row stays
   * without its range.
   * @throws {TagNotFoundError} when the row does not exist (no row is ever created).
   * @throws {IdOverflowError} when the new `max_id` would pass 2^63-1.
   * @throws {AllocationLockTimeoutError} on a lock-wait timeout or deadlock.
   * @throws {SequenceFencedError} when `fence` is given and the group's issuer row no longer
   *   names its holder and term (nothing allocated). Stores that cannot check a fence
   *   (SQLite, the in-memory fake, several databases) ignore it: the database-held election
   *   refuses them at start.
   * @throws {AllocationError} on any other database failure (the journal's too).
   */
  allocate(
    tag: string,
    step?: number,
    fence?: IssuerFence,
    journal?: RangeJournalEntry,
  ): Promise<AllocatedRange>;
  /**
   * The journal's range of `tag` holding `id` (docs/design.md, "The ID journal"): the newest
   * granted range `[start, end)` with `start <= id < end` (a range handed back in part and
   * granted again is found in its newer grant). Stores without a journal leave it out.
   * @returns `null` when no journalled range holds `id`.
   * @throws {AllocationError} when the journal cannot be read.
   */
  grantOf?(tag: string, id: bigint): Promise<RangeGrant | null>;
  /**
   * Hands back the unused tail of this instance's newest range in one guarded update:
   * `max_id = newMaxId WHERE max_id = expectedMaxId`. Succeeds only when `max_id` is still
   * exactly what this instance's allocation read back (nobody allocated since); never raises
   * `max_id` and never lowers it below `newMaxId` (docs/design.md, segment invariants).
   * `source` is the range's {@link AllocatedRange.source} (several databases: the one that
   * granted it); a single store ignores it.
   * @returns true when the row was lowered; false when `max_id` moved on, the row is gone,
   *   or `newMaxId === expectedMaxId` (nothing written).
   * @throws {AllocationError} when `newMaxId > expectedMaxId` or `newMaxId < 0` (nothing
   *   written), or on a database failure.
   */
  handBack(tag: string, expectedMaxId: bigint, newMaxId: bigint, source?: number): Promise<boolean>;
  /**
   * The row of `tag`, or `null` when there is none. Used to serve a tag created after the
   * last tag refresh (possibly by another instance) at once.
   * @throws {AllocationError} when the table cannot be read.
   */
  findTag(tag: string): Promise<LeafAllocRow | null>;
  /**
   * Inserts a new row (`max_id` default 1), checked by `checkNewTag` first.
   * @returns the row as stored.
   * @throws {InvalidArgumentError} for a malformed tag, step, `max_id` or description.
   * @throws {TagExistsError} when the tag already has a row (the row is left alone).
   * @throws {AllocationError} on any other database failure.
   */
  createTag(tag: NewTag): Promise<LeafAllocRow>;
  /**
   * Changes the `step` and/or `description` of a row, never its `max_id`.
   * @returns the row after the change.
   * @throws {InvalidArgumentError} for an empty change or a malformed step or description.
   * @throws {TagNotFoundError} when the tag has no row.
   * @throws {AllocationError} on any other database failure.
   */
  updateTag(tag: string, update: TagUpdate): Promise<LeafAllocRow>;
}

/** Largest value of a signed 64-bit `max_id`. */
export const MAX_INT64 = (1n << 63n) - 1n;
