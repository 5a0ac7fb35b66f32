import { TagExistsError } from '../core/errors/tag-exists.error';
import { TagNotFoundError } from '../core/errors/tag-not-found.error';
import { advanceMaxId, checkHandBack } from '../core/segment/allocation-rule';
import { AllocationError } from '../core/errors/allocation.error';
import type {
  AllocatedRange,
  IssuerFence,
  LeafAllocRow,
  LeafAllocStore,
  NewTag,
  RangeGrant,
  RangeJournalEntry,
  TagUpdate,
} from '../core/segment/leaf-alloc-store.port';
import { checkNewTag, checkTagUpdate } from '../core/segment/tag-definition';

/**
 * An in-memory `leaf_alloc` for unit tests. Allocations can be held (`hold()`), made to
 * fail (`failNext()`), and are counted; the semantics match the real stores: it passes the
 * same contract suite (`contracts/leaf-alloc-store.contract.ts`) and applies the same
 * allocation rule (`advanceMaxId`).
 */
export class InMemoryAllocStore implements LeafAllocStore {
  private readonly rows = new Map<
    string,
    {
      maxId: bigint;
      step: number;
      description: string | null;
      updateTime: Date;
      modulus?: number;
      residue?: number;
    }
  >();
  private failures: unknown[] = [];
  private gate: Promise<void> | null = null;
  private openGate: (() => void) | null = null;
  /** Every allocation attempted, in order. */
  readonly calls: Array<{ tag: string; step: number | undefined }> = [];
  /** Every `findTag` asked, in order. */
  readonly lookups: string[] = [];
  /** The ID journal: one row per allocation given a journal entry, oldest first. */
  readonly journal: RangeGrant[] = [];
  private journalBroken = false;

  /**
   * While `broken`, writing a journal row fails, and with it the whole allocation (as a
   * database's transaction would): `max_id` stays where it was.
   */
  breakJournal(broken = true): void {
    this.journalBroken = broken;
  }

  /** Adds or replaces a tag (as an `INSERT` would: `update_time` is now). */
  setTag(tag: string, step: number, maxId = 1n, description: string | null = null): this {
    this.rows.set(tag, { maxId, step, description, updateTime: new Date() });
    return this;
  }

  /**
   * Gives a tag's row a residue class (`id_modulus`, `id_residue`), as a database serving
   * with others does (docs/design.md, "Several databases per tag"); allocations report it.
   */
  setClass(tag: string, modulus: number, residue: number): this {
    const row = this.rows.get(tag);
    if (!row) throw new TagNotFoundError(tag);
    row.modulus = modulus;
    row.residue = residue;
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

  /** Every row, ordered by tag (as the SQL stores' `ORDER BY biz_tag`). */
  async listAll(): Promise<LeafAllocRow[]> {
    return [...this.rows]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([tag, row]) => ({ tag, ...row }));
  }

  async findTag(tag: string): Promise<LeafAllocRow | null> {
    this.lookups.push(tag);
    if (this.gate) await this.gate;
    const row = this.rows.get(tag);
    return row ? { tag, ...row } : null;
  }

  async createTag(input: NewTag): Promise<LeafAllocRow> {
    const tag = checkNewTag(input);
    if (this.rows.has(tag.tag)) throw new TagExistsError(tag.tag);
    const row = {
      maxId: tag.maxId,
      step: tag.step,
      description: tag.description,
      updateTime: new Date(),
    };
    this.rows.set(tag.tag, row);
    return { tag: tag.tag, ...row };
  }

  async updateTag(tag: string, update: TagUpdate): Promise<LeafAllocRow> {
    const change = checkTagUpdate(tag, update);
    const row = this.rows.get(tag);
    if (!row) throw new TagNotFoundError(tag);
    if (change.step !== undefined) row.step = change.step;
    if (change.description !== undefined) row.description = change.description;
    row.updateTime = new Date();
    return { tag, ...row };
  }

  async allocate(
    tag: string,
    step?: number,
    _fence?: IssuerFence,
    journal?: RangeJournalEntry,
  ): Promise<AllocatedRange> {
    this.calls.push({ tag, step });
    if (this.gate) await this.gate;
    const failure = this.failures.shift();
    if (failure !== undefined) throw failure;
    const row = this.rows.get(tag);
    if (!row) throw new TagNotFoundError(tag);
    const applied = step ?? row.step;
    const maxId = advanceMaxId(tag, row.maxId, applied);
    if (journal) {
      if (this.journalBroken) throw new AllocationError(tag, 'the journal cannot be written');
      this.journal.push({
        tag,
        start: row.maxId,
        end: maxId,
        mode: journal.mode,
        instance: journal.instance,
        term: journal.term,
        grantedAt: new Date(),
        ...(row.modulus === undefined ? {} : { modulus: row.modulus, residue: row.residue ?? 0 }),
      });
    }
    row.maxId = maxId;
    row.updateTime = new Date();
    const range = { tag, maxId: row.maxId, baseStep: row.step, appliedStep: applied };
    return row.modulus === undefined
      ? range
      : { ...range, modulus: row.modulus, residue: row.residue ?? 0 };
  }

  /** The newest journalled range of `tag` holding `id` (as the SQL stores choose it). */
  async grantOf(tag: string, id: bigint): Promise<RangeGrant | null> {
    let found: RangeGrant | null = null;
    for (const grant of this.journal) {
      if (grant.tag !== tag || grant.start > id || grant.end <= id) continue;
      if (found === null || grant.start >= found.start) found = grant;
    }
    return found;
  }

  /** Every hand-back attempted, in order. */
  readonly handBacks: Array<{ tag: string; expectedMaxId: bigint; newMaxId: bigint }> = [];

  async handBack(tag: string, expectedMaxId: bigint, newMaxId: bigint): Promise<boolean> {
    this.handBacks.push({ tag, expectedMaxId, newMaxId });
    if (this.gate) await this.gate;
    if (!checkHandBack(tag, expectedMaxId, newMaxId)) return false;
    const row = this.rows.get(tag);
    if (!row || row.maxId !== expectedMaxId) return false;
    row.maxId = newMaxId;
    row.updateTime = new Date();
    return true;
  }
}
