import type { HighWaterMark, HighWaterStore } from './high-water';

/**
 * A {@link HighWaterStore} that remembers, per tag, the mark as this instance last read or
 * wrote it, for the monitoring page (`/cache`). Nothing else reads it: every allocation still
 * reads the mark from the store.
 */
export class RecordingHighWaterStore implements HighWaterStore {
  private readonly seen = new Map<string, bigint>();

  /** @param marks the adapter the marks live in (its labels and life are read by the module). */
  constructor(readonly marks: HighWaterStore) {}

  /** The mark of `tag` as last read or written here; `null` before the first. */
  lastSeen(tag: string): bigint | null {
    return this.seen.get(tag) ?? null;
  }

  async read(tag: string): Promise<HighWaterMark | null> {
    const mark = await this.marks.read(tag);
    if (mark) this.seen.set(tag, mark.value);
    return mark;
  }

  async write(tag: string, value: bigint, expected: HighWaterMark | null): Promise<boolean> {
    const written = await this.marks.write(tag, value, expected);
    if (written) this.seen.set(tag, value);
    return written;
  }
}
