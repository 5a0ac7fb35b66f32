import type { HighWaterMark, HighWaterStore } from '../core/segment/high-water';

/**
 * The in-memory adapter of {@link HighWaterStore}: marks in a Map, with ZooKeeper's versioned
 * compare-and-set (a write against a mark read earlier fails once another write came between).
 * Two stores given one `marks` Map are two instances on the same marks.
 */
export class InMemoryHighWaterStore implements HighWaterStore {
  readonly kind = 'memory';
  /** Set false to make the store unreachable: every call then rejects. */
  available = true;

  constructor(readonly marks = new Map<string, HighWaterMark>()) {}

  describe(): string {
    return 'memory';
  }

  read(tag: string): Promise<HighWaterMark | null> {
    if (!this.available) return Promise.reject(new Error('the in-memory marks are unavailable'));
    return Promise.resolve(this.marks.get(tag) ?? null);
  }

  write(tag: string, value: bigint, expected: HighWaterMark | null): Promise<boolean> {
    if (!this.available) return Promise.reject(new Error('the in-memory marks are unavailable'));
    const current = this.marks.get(tag) ?? null;
    if (current?.version !== expected?.version) return Promise.resolve(false);
    this.marks.set(tag, { value, version: (current?.version ?? -1) + 1 });
    return Promise.resolve(true);
  }
}
