import { HighWaterUnavailableError } from '../errors/allocation.error';

/**
 * A tag's high-water mark as read: `value` is at or above the end of every range of the tag
 * ever served; `version` is what a compare-and-set must match.
 */
export interface HighWaterMark {
  readonly value: bigint;
  readonly version: number;
}

/**
 * Port: where the per-tag high-water marks live, a store the database's regression (a
 * restored backup, a hand edit, a promoted replica) does not erase. Adapters: ZooKeeper
 * (`adapters/zookeeper`), a database of its own (`adapters/typeorm`), in memory
 * (`testing/`); the module picks one where it is assembled (`nest/coordination.assembly.ts`).
 * The optional members are the connection's life and labels, for the module only.
 */
export interface HighWaterStore {
  /** What holds the marks (`zookeeper`, `database`), for logs and readiness only. */
  readonly kind?: string;
  /** Where the marks live (parent znode, `host:port/database`), for logs and readiness. */
  describe?(): string;
  /** False while the store cannot be reached. @default true */
  readonly available?: boolean;
  /** Opens what the store needs (a session). @throws when not reached within `timeoutMs` */
  open?(timeoutMs: number): Promise<void>;
  /** Closes what {@link open} opened; a shared connection (a DataSource) is left alone. */
  close?(): Promise<void>;
  /**
   * The mark of `tag`, or `null` when the tag has none yet.
   * @throws {HighWaterUnavailableError} when the store cannot be reached.
   */
  read(tag: string): Promise<HighWaterMark | null>;
  /**
   * Compare-and-set: writes `value` when the mark is still `expected` (`null`: create it,
   * only if absent).
   * @returns false when the mark changed since `expected` was read (nothing written).
   * @throws {HighWaterUnavailableError} when the outcome is unknown or the store cannot be
   *   reached (the write may or may not have happened).
   */
  write(tag: string, value: bigint, expected: HighWaterMark | null): Promise<boolean>;
}

/** `max_id` found below the high-water mark, and raised to it by the same allocation. */
export interface HighWaterRepair {
  /** `max_id` as the allocation found it. */
  readonly maxId: bigint;
  /** The high-water mark it was raised to (the new range starts there). */
  readonly highWater: bigint;
  /**
   * `regression`: `max_id` went back (hand edit, restore, promoted replica).
   * `unconfirmed-commit`: this instance wrote the mark for an allocation whose commit then
   * failed or was not confirmed; the gap is that range, never served.
   */
  readonly kind: 'regression' | 'unconfirmed-commit';
}

/** What {@link HighWaterFence.plan} decided for one allocation, with the row locked. */
export interface FencePlan {
  readonly tag: string;
  /**
   * The mark's key: the tag, or `tag#residue` for a database serving residue class `residue`
   * of several (`highWaterKey`, docs/design.md "Several databases per tag").
   */
  readonly key: string;
  /** The mark as read (null: none yet). */
  readonly mark: HighWaterMark | null;
  /** The `max_id` the new range starts at: `max(max_id, mark)`. */
  readonly base: bigint;
  /** Set when `max_id` was below the mark. */
  readonly repair: HighWaterRepair | null;
}

/** How often an allocation whose compare-and-set lost is run again before giving up. */
export const HIGH_WATER_ATTEMPTS = 3;

/**
 * The allocation side of the high-water mark (docs/design.md, "High-water mark"). A store
 * calls, inside its transaction and with the tag's row locked:
 *
 * 1. {@link plan} with the `max_id` it read: the new range starts at `max(max_id, mark)`;
 *    `max_id` below the mark is a regression, repaired by this very allocation;
 * 2. {@link publish} with the new `max_id`, before COMMIT: the mark is raised to the range's
 *    end, durably, before anyone can be served from it; a lost compare-and-set throws
 *    {@link HighWaterConflict} and the store rolls back and runs the allocation again;
 * 3. {@link committed} after a successful COMMIT.
 *
 * A hand-back lowers the mark from exactly the value it lowers `max_id` from
 * ({@link handBack}), so a graceful restart still skips no IDs.
 */
export class HighWaterFence {
  /**
   * Per tag: the mark this instance wrote for an allocation whose commit did not succeed, and
   * where that range started (what the row holds if the commit was lost and nothing else
   * happened).
   */
  private readonly unconfirmed = new Map<string, { mark: bigint; found: bigint }>();

  constructor(private readonly marks: HighWaterStore) {}

  /**
   * Reads the mark and decides where the range starts.
   * @throws {HighWaterUnavailableError} when the mark cannot be read.
   */
  async plan(tag: string, maxId: bigint, key: string = tag): Promise<FencePlan> {
    const mark = await this.marks.read(key);
    if (mark === null || mark.value <= maxId) return { tag, key, mark, base: maxId, repair: null };
    // Only our own lost commit when the row is exactly as that allocation found it: a row
    // below that went back as well (a failover during the commit: docs/design.md).
    const own = this.unconfirmed.get(key);
    const kind =
      own?.mark === mark.value && own.found === maxId ? 'unconfirmed-commit' : 'regression';
    return { tag, key, mark, base: mark.value, repair: { maxId, highWater: mark.value, kind } };
  }

  /**
   * Raises the mark to `newMaxId` (compare-and-set against the mark `plan` read).
   * @throws {HighWaterConflict} when the mark changed meanwhile (nothing written).
   * @throws {HighWaterUnavailableError} when the outcome is unknown.
   */
  async publish(plan: FencePlan, newMaxId: bigint): Promise<void> {
    // Until COMMIT succeeds, a mark above max_id may be this allocation's own.
    // `found` is the base: after a failed repair the row is still below it, a regression.
    this.unconfirmed.set(plan.key, { mark: newMaxId, found: plan.base });
    if (!(await this.marks.write(plan.key, newMaxId, plan.mark))) {
      this.unconfirmed.delete(plan.key);
      throw new HighWaterConflict(plan.tag);
    }
  }

  /**
   * After a COMMIT of the range ending at `maxId` succeeded: its mark is confirmed. (A failed
   * COMMIT leaves the mark recorded as unconfirmed; so does a later allocation's, which may
   * have published meanwhile: only the entry of exactly this range is cleared.) `key` is the
   * plan's.
   */
  committed(key: string, maxId: bigint): void {
    if (this.unconfirmed.get(key)?.mark === maxId) this.unconfirmed.delete(key);
  }

  /**
   * The hand-back's half, with the row locked and `max_id` found equal to `expectedMaxId`:
   * lowers the mark from exactly `expectedMaxId` to `newMaxId`.
   * @returns false when the mark is not `expectedMaxId` (someone's allocation is above ours,
   *   or the mark is missing): the hand-back must not happen.
   * @throws {HighWaterUnavailableError} when the store cannot be reached.
   */
  async handBack(key: string, expectedMaxId: bigint, newMaxId: bigint): Promise<boolean> {
    const mark = await this.marks.read(key);
    if (mark === null || mark.value !== expectedMaxId) return false;
    return this.marks.write(key, newMaxId, mark);
  }
}

/**
 * The mark changed between its read and its compare-and-set (another writer outside the
 * row lock: a second database, a hand edit of the znode). Internal: the store runs the
 * allocation again, then gives up with {@link HighWaterUnavailableError}.
 */
export class HighWaterConflict extends Error {
  constructor(readonly tag: string) {
    super(`Tag "${tag}": the high-water mark changed during the allocation`);
    this.name = 'HighWaterConflict';
  }
}

/**
 * Runs `attempt` up to {@link HIGH_WATER_ATTEMPTS} times while it fails with
 * {@link HighWaterConflict}; then throws {@link HighWaterUnavailableError}.
 */
export async function withHighWaterRetry<T>(tag: string, attempt: () => Promise<T>): Promise<T> {
  for (let i = 1; ; i++) {
    try {
      return await attempt();
    } catch (error) {
      if (!(error instanceof HighWaterConflict)) throw error;
      if (i >= HIGH_WATER_ATTEMPTS) {
        throw new HighWaterUnavailableError(
          tag,
          `it changed under ${HIGH_WATER_ATTEMPTS} allocations in a row`,
          { cause: error },
        );
      }
    }
  }
}
