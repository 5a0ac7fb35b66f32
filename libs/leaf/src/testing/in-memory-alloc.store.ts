import { IdOverflowError } from '../core/errors/allocation.error';
import { TagNotFoundError } from '../core/errors/tag-not-found.error';
import {
  MAX_INT64,
  type AllocatedRange,
  type LeafAllocRow,
  type LeafAllocStore,
} from '../core/segment/leaf-alloc-store.port';

/**
 * An in-memory `leaf_alloc` for unit tests. Allocations can be held (`hold()`), made to
 * fail (`failNext()`), and are counted; the semantics match the real stores.
 */
export class InMemoryAllocStore implements LeafAllocStore {
  private readonly rows = new Map<
    string,
    { maxId: bigint; step: number; description: string | null }
  >();
  private failures: unknown[] = [];
  private gate: Promise<void> | null = null;
  private openGate: (() => void) | null = null;
  /** Every allocation attempted, in order. */
  readonly calls: Array<{ tag: string; step: number | undefined }> = [];

  /** Adds or replaces a tag. */
  setTag(tag: string, step: number, maxId = 1n): this {
    this.rows.set(tag, { maxId, step, description: null });
    return this;
  }

  /** Removes a tag. */
  deleteTag(tag: string): void {
    this.rows.delete(tag);
  }

  /** Current `max_id` of a tag. */
  maxId(tag: string): bigint | undefined {
    return this.rows.get(tag)?.maxId;
  }

  /** The next allocation rejects with `error` (without touching the row). */
  failNext(error: unknown): void {
    this.failures.push(error);
  }

  /** Allocations wait until `release()` is called. */
  hold(): void {
    this.gate ??= new Promise((resolve) => (this.openGate = resolve));
  }

  /** Lets held allocations proceed. */
  release(): void {
    this.openGate?.();
    this.gate = null;
    this.openGate = null;
  }

  async listTags(): Promise<string[]> {
    return [...this.rows.keys()];
  }

  async listAll(): Promise<LeafAllocRow[]> {
    return [...this.rows].map(([tag, row]) => ({ tag, ...row, updateTime: null }));
  }

  async allocate(tag: string, step?: number): Promise<AllocatedRange> {
    this.calls.push({ tag, step });
    if (this.gate) await this.gate;
    const failure = this.failures.shift();
    if (failure !== undefined) throw failure;
    const row = this.rows.get(tag);
    if (!row) throw new TagNotFoundError(tag);
    const applied = step ?? row.step;
    if (row.maxId + BigInt(applied) > MAX_INT64) throw new IdOverflowError(tag, row.maxId, applied);
    row.maxId += BigInt(applied);
    return { tag, maxId: row.maxId, baseStep: row.step, appliedStep: applied };
  }
}
