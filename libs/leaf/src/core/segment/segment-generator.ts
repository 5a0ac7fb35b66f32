import type { SegmentBuffer } from './segment-buffer';

/**
 * A per-tag handle: obtained once with `SegmentService.generator(tag)`, then called
 * without a key lookup. `next()` is synchronous while the tag's buffer is warm.
 */
export class SegmentGenerator {
  constructor(private readonly buffer: SegmentBuffer) {}

  /** The business tag this handle serves. */
  get tag(): string {
    return this.buffer.tag;
  }

  /**
   * The next ID, synchronously.
   * @throws {SegmentNotReadyError} when no range is in memory right now (a load has been started).
   * @throws {TagNotFoundError} when the tag was removed from the table.
   */
  next(): bigint {
    return this.buffer.nextSync();
  }

  /**
   * The next ID, waiting for a range when none is in memory.
   * @throws {SegmentNotReadyError} when no range arrived within the load timeout.
   */
  nextAsync(): Promise<bigint> {
    return this.buffer.nextAsync();
  }
}
