import { AllocationRegressedError } from '../errors/allocation.error';
import type { AllocatedRange } from './leaf-alloc-store.port';

/** Ranges remembered per tag for the overlap test (enough for every load that can be in flight). */
const RECENT_RANGES = 16;

interface Held {
  /** The highest `max_id` any range of this tag granted to this instance read back. */
  upTo: bigint;
  /** The newest ranges granted, `[start, end)`. */
  readonly recent: Array<{ start: bigint; end: bigint }>;
}

/**
 * Refuses a range the database granted that is not above what this instance already holds
 * (docs/design.md, segment invariants: `max_id` lowered by hand or restored from a backup).
 *
 * Allocations of one tag are serialised by the row lock and `max_id` only grows, so a
 * range committed after this instance received another one starts at or above that one's
 * end. Loads may finish out of order (a buffer's load and a direct range), so the floor is
 * taken when the load is asked for ({@link floor}), and the range is also checked against
 * the ranges granted while it was in flight. One instance can only see its own ranges: a
 * lowered `max_id` is caught by the instance that held the IDs above it.
 */
export class RangeGuard {
  /** Per tag, per database (`-1`: the only one): what this instance holds from it. */
  private readonly held = new Map<string, Map<number, Held>>();

  /**
   * The floors a range of `tag` asked for now must start at, per database that granted this
   * instance ranges of it (`null`: nothing held yet). Each database has its own `max_id`
   * (docs/design.md, "Several databases per tag"), so a range is compared only with the
   * ranges of the database that granted it.
   */
  floor(tag: string): ReadonlyMap<number, bigint> | null {
    const sources = this.held.get(tag);
    if (!sources) return null;
    return new Map([...sources].map(([source, held]) => [source, held.upTo]));
  }

  /**
   * Accepts `range` (asked for when the floors were `floors`) and remembers it.
   * @throws {AllocationRegressedError} when it starts below its database's floor or overlaps
   *   a range that database granted this instance; nothing is remembered then.
   */
  admit(range: AllocatedRange, floors: ReadonlyMap<number, bigint> | null): void {
    const start = range.maxId - BigInt(range.appliedStep);
    const end = range.maxId;
    const source = range.source ?? -1;
    let sources = this.held.get(range.tag);
    if (!sources) this.held.set(range.tag, (sources = new Map()));
    const held = sources.get(source);
    if (held) {
      const floor = floors?.get(source);
      const overlaps = held.recent.some((r) => start < r.end && r.start < end);
      if ((floor !== undefined && start < floor) || overlaps) {
        throw new AllocationRegressedError(range.tag, start, end, held.upTo);
      }
      if (end > held.upTo) held.upTo = end;
      held.recent.push({ start, end });
      if (held.recent.length > RECENT_RANGES) held.recent.shift();
    } else {
      sources.set(source, { upTo: end, recent: [{ start, end }] });
    }
  }
}
