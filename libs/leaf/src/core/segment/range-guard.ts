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
  private readonly held = new Map<string, Held>();

  /** The floor a range of `tag` asked for now must start at (`null`: nothing held yet). */
  floor(tag: string): bigint | null {
    return this.held.get(tag)?.upTo ?? null;
  }

  /**
   * Accepts `range` (asked for when the floor was `floor`) and remembers it.
   * @throws {AllocationRegressedError} when it starts below `floor` or overlaps a range this
   *   instance was granted; nothing is remembered then.
   */
  admit(range: AllocatedRange, floor: bigint | null): void {
    const start = range.maxId - BigInt(range.appliedStep);
    const end = range.maxId;
    const held = this.held.get(range.tag);
    if (held) {
      const overlaps = held.recent.some((r) => start < r.end && r.start < end);
      if ((floor !== null && start < floor) || overlaps) {
        throw new AllocationRegressedError(range.tag, start, end, held.upTo);
      }
      if (end > held.upTo) held.upTo = end;
      held.recent.push({ start, end });
      if (held.recent.length > RECENT_RANGES) held.recent.shift();
    } else {
      this.held.set(range.tag, { upTo: end, recent: [{ start, end }] });
    }
  }
}
