import type { Clock } from '../clock';
import { AllocationError } from '../errors/allocation.error';
import { errorText, LeafError } from '../errors/leaf.error';
import { TagNotFoundError } from '../errors/tag-not-found.error';
import { withTimeout } from '../with-timeout';
import type {
  AllocatedRange,
  IssuerFence,
  LeafAllocRow,
  LeafAllocStore,
  NewTag,
  RangeGrant,
  RangeJournalEntry,
  TagUpdate,
} from './leaf-alloc-store.port';
import {
  classesIntersect,
  idsFrom,
  firstInClass,
  inResidueClass,
  residueClassOf as classOf,
  residueClassProblem,
  type ResidueClass,
} from './residue-class';

/** One database of a {@link MultiAllocStore}. */
export interface AllocSource {
  /** How logs, readiness and `/cache` name it (never a password). */
  readonly name: string;
  readonly store: LeafAllocStore;
}

/** Settings of a {@link MultiAllocStore}. */
export interface MultiAllocStoreOptions {
  /** Longest wait for one database's answer before the next one is asked (a frozen server). */
  readonly timeoutMs: number;
  /** First pause before a failed database is asked again; doubles per failure up to 15 s. */
  readonly retryMs: number;
}

/** Longest pause before a failed database is asked again. */
const MAX_RETRY_MS = 15_000;

/** State of one database as readiness and `/cache` show it. */
export interface AllocSourceStatus {
  readonly index: number;
  readonly name: string;
  /** `unknown`: not asked yet; `up`: its last answer was good; `down`: it failed or timed out. */
  readonly state: 'unknown' | 'up' | 'down';
  readonly lastError: string | null;
  /** When it last failed (the store's clock, ms). */
  readonly lastErrorAt: number | null;
  /** Failures in a row. */
  readonly failures: number;
  /** Ranges it granted this instance. */
  readonly ranges: number;
  /** Tags in its table at its last listing (`null`: never listed). */
  readonly tags: number | null;
}

/** A configuration problem of the databases' tables, shown by readiness. */
export interface AllocSourceProblem {
  readonly tag: string;
  /** `missing`: some databases lack the tag; `clash`: two classes share IDs (never served). */
  readonly kind: 'missing' | 'clash' | 'invalid-class';
  readonly detail: string;
}

/** One database: its state as {@link MultiAllocStore.status} shows it (`tags` aside), and more. */
type SourceState = {
  -readonly [K in Exclude<keyof AllocSourceStatus, 'tags'>]: AllocSourceStatus[K];
} & {
  readonly store: LeafAllocStore;
  retryAt: number;
  /** Its rows' classes at its last listing, by tag (`null`: never listed). */
  classes: Map<string, ResidueClass> | null;
};

/**
 * Several independent databases serving the same tags (docs/design.md, "Several databases
 * per tag"), as one {@link LeafAllocStore}. Each row carries its residue class
 * (`id_modulus`, `id_residue`), read in the allocation's own transaction, and only the IDs of
 * that class in a range are served: databases never coordinate, and their IDs never meet.
 *
 * - **Failover**: each allocation of a tag goes to the next database in turn (round robin per
 *   tag); one that fails or does not answer within `timeoutMs` is skipped (its range, should
 *   it commit later, is abandoned: a gap) and asked again after a back-off, so the instance
 *   serves every tag while any database holding it answers.
 * - **Checks**: every listing records each database's classes per tag. A tag missing from a
 *   database that answered, or two classes of one tag that intersect, is a problem readiness
 *   shows; an allocation whose class intersects another database's known class for the tag
 *   is refused (nothing served).
 * - Ranges carry `source` (the database's index), so the hand-back, the range guard and the
 *   high-water mark stay per database.
 */
export class MultiAllocStore implements LeafAllocStore {
  private readonly sources: SourceState[];
  /** Round robin position per tag. */
  private readonly turn = new Map<string, number>();

  constructor(
    sources: readonly AllocSource[],
    private readonly options: MultiAllocStoreOptions,
    private readonly clock: Clock,
  ) {
    if (sources.length === 0) throw new Error('MultiAllocStore needs at least one database');
    this.sources = sources.map(({ name, store }, index) => ({
      ...{ index, name, store, state: 'unknown', lastError: null, lastErrorAt: null },
      ...{ failures: 0, retryAt: 0, ranges: 0, classes: null },
    }));
  }

  /** Every database's state. */
  status(): AllocSourceStatus[] {
    return this.sources.map(({ store: _store, retryAt: _retryAt, classes, ...shown }) => ({
      ...shown,
      tags: classes?.size ?? null,
    }));
  }

  /**
   * Problems of the tables as last listed: a tag some listed database lacks, a class that is
   * invalid, two classes of a tag that share IDs.
   */
  problems(): AllocSourceProblem[] {
    const listed = this.sources.filter((s) => s.classes !== null);
    const tags = new Set<string>();
    for (const s of listed) for (const tag of s.classes!.keys()) tags.add(tag);
    const problems: AllocSourceProblem[] = [];
    for (const tag of [...tags].sort()) {
      const lacking = listed.filter((s) => !s.classes!.has(tag)).map((s) => s.name);
      if (lacking.length > 0) {
        problems.push({ tag, kind: 'missing', detail: `no row in ${lacking.join(', ')}` });
      }
      const holders = listed.filter((s) => s.classes!.has(tag));
      for (const s of holders) {
        const problem = residueClassProblem(s.classes!.get(tag)!);
        if (problem) problems.push({ tag, kind: 'invalid-class', detail: `${s.name}: ${problem}` });
      }
      for (let i = 0; i < holders.length; i++) {
        for (let j = i + 1; j < holders.length; j++) {
          const a = holders[i].classes!.get(tag)!;
          const b = holders[j].classes!.get(tag)!;
          if (classesIntersect(a, b)) {
            problems.push({
              tag,
              kind: 'clash',
              detail: `${holders[i].name} (${a.residue} mod ${a.modulus}) and ${holders[j].name} (${b.residue} mod ${b.modulus}) share IDs`,
            });
          }
        }
      }
    }
    return problems;
  }

  /**
   * The union of every answering database's tags (a database down keeps the tags of its last
   * listing).
   * @throws the first database's error when none answers.
   */
  async listTags(): Promise<string[]> {
    const rows = await this.listAll();
    const tags = new Set(rows.map((row) => row.tag));
    for (const s of this.sources) for (const tag of s.classes?.keys() ?? []) tags.add(tag);
    return [...tags];
  }

  /**
   * Every row of every answering database (`source` names it), ordered by tag.
   * @throws the first database's error when none answers.
   */
  async listAll(): Promise<LeafAllocRow[]> {
    const results = await Promise.allSettled(
      this.sources.map(async (s) => {
        const rows = await this.call(s, () => s.store.listAll());
        s.classes = new Map(rows.map((row) => [row.tag, classOf(row)]));
        return rows.map((row) => ({ ...row, source: s.name }));
      }),
    );
    const answered = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
    if (answered.length === 0) throw (results[0] as PromiseRejectedResult).reason;
    return answered.flat().sort((a, b) => (a.tag < b.tag ? -1 : a.tag > b.tag ? 1 : 0));
  }

  /**
   * The row of `tag` from the first database (in turn) that has it.
   * @throws the last error when no database answered.
   */
  async findTag(tag: string): Promise<LeafAllocRow | null> {
    let lastError: unknown = null;
    for (const s of this.order(tag)) {
      try {
        const row = await this.call(s, () => s.store.findTag(tag));
        if (row) return { ...row, source: s.name };
      } catch (error) {
        lastError = error;
      }
    }
    if (lastError !== null && this.sources.every((s) => s.state === 'down')) throw lastError;
    return null;
  }

  /**
   * Takes the next range of `tag` from the next database in turn that answers.
   * @throws {TagNotFoundError} when no database has the tag.
   * @throws {AllocationError} when the range's class shares IDs with another database's class
   *   for the tag (nothing served), or the last database's error when none answered.
   */
  async allocate(
    tag: string,
    step?: number,
    _fence?: IssuerFence,
    journal?: RangeJournalEntry,
  ): Promise<AllocatedRange> {
    const order = this.order(tag);
    this.turn.set(tag, (order[0].index + 1) % this.sources.length);
    let lastError: unknown = null;
    for (const s of order) {
      let range: AllocatedRange;
      try {
        // Each database journals the ranges it grants, in its own transaction.
        range = await this.call(s, () => s.store.allocate(tag, step, undefined, journal));
      } catch (error) {
        // A row missing in one database says nothing about the others.
        if (!(error instanceof TagNotFoundError) || lastError === null) lastError = error;
        continue;
      }
      this.admitClass(s, range);
      s.ranges++;
      return { ...range, source: s.index };
    }
    throw lastError ?? new TagNotFoundError(tag);
  }

  /**
   * The journalled range holding `id` from the database whose residue class contains it (each
   * journals its own ranges: numbers overlap, classes do not). Failing databases are skipped.
   * @throws the last database's error when none answered.
   */
  async grantOf(tag: string, id: bigint): Promise<RangeGrant | null> {
    const failures: unknown[] = [];
    for (const s of this.sources.filter((source) => source.store.grantOf)) {
      const grant = await this.call(s, () => s.store.grantOf!(tag, id)).catch((error: unknown) => {
        failures.push(error);
        return null;
      });
      if (grant && inResidueClass(id, grant)) return { ...grant, source: s.name };
    }
    if (failures.length > 0 && failures.length === this.sources.length) throw failures.at(-1);
    return null;
  }

  /**
   * Hands the tail back to the database that granted it (`source`).
   * @throws {AllocationError} without a valid `source`, or the database's error.
   */
  async handBack(
    tag: string,
    expectedMaxId: bigint,
    newMaxId: bigint,
    source?: number,
  ): Promise<boolean> {
    const s = source === undefined ? undefined : this.sources[source];
    if (!s) throw new AllocationError(tag, `Tag "${tag}": hand-back without its database`);
    return this.call(s, () => s.store.handBack(tag, expectedMaxId, newMaxId));
  }

  /**
   * Not offered with several databases: each row needs its own residue class, so the rows
   * are created in each database by the operator (docs/operations.md).
   * @throws {AllocationError} always.
   */
  createTag(tag: NewTag): Promise<LeafAllocRow> {
    return Promise.reject(
      new AllocationError(
        String(tag.tag),
        'With several databases a tag is created in each database with its residue class (docs/operations.md, "Several databases per tag")',
      ),
    );
  }

  /**
   * Changes `step`/`description` in every database (all must answer).
   * @throws the first database's error (databases already changed keep the change).
   */
  async updateTag(tag: string, update: TagUpdate): Promise<LeafAllocRow> {
    const rows: LeafAllocRow[] = [];
    for (const s of this.sources)
      rows.push(await this.call(s, () => s.store.updateTag(tag, update)));
    return rows[0];
  }

  /**
   * Databases in the order an allocation of `tag` asks them: from the tag's turn on, those
   * not waiting out a back-off first, then the ones that are (so a recovered database is
   * asked again, and with all failing every one is still tried).
   */
  private order(tag: string): SourceState[] {
    const n = this.sources.length;
    const from = this.turn.get(tag) ?? 0;
    const now = this.clock.now();
    const rotated = Array.from({ length: n }, (_, i) => this.sources[(from + i) % n]);
    const ready = rotated.filter((s) => s.state !== 'down' || s.retryAt <= now);
    const waiting = rotated.filter((s) => s.state === 'down' && s.retryAt > now);
    return [...ready, ...waiting];
  }

  /** Refuses a range whose class shares IDs with another database's known class for the tag. */
  private admitClass(s: SourceState, range: AllocatedRange): void {
    const own = classOf(range);
    const problem = residueClassProblem(own);
    const clash = this.sources.find((other) => {
      const theirs = other !== s ? other.classes?.get(range.tag) : undefined;
      return theirs !== undefined && classesIntersect(own, theirs);
    });
    const stride = BigInt(own.modulus);
    const start = firstInClass(
      range.maxId - BigInt(range.appliedStep),
      stride,
      BigInt(own.residue),
    );
    const empty = idsFrom(start, range.maxId, stride) === 0;
    if (problem || clash || empty) {
      const why = problem
        ? problem
        : clash
          ? `its class ${own.residue} mod ${own.modulus} shares IDs with ${clash.name}'s`
          : `the step ${range.appliedStep} holds no ID of its class ${own.residue} mod ${own.modulus}`;
      throw new AllocationError(
        range.tag,
        `Tag "${range.tag}": the range from ${s.name} is refused, never served: ${why} (docs/operations.md, "Several databases per tag")`,
      );
    }
    s.classes?.set(range.tag, own);
  }

  /** One call to one database, bounded by `timeoutMs`; its outcome updates the database's state. */
  private async call<T>(s: SourceState, run: () => Promise<T>): Promise<T> {
    let result: { ok: true; value: T } | { ok: false };
    try {
      result = await withTimeout(run(), this.options.timeoutMs);
    } catch (error) {
      // Errors about the tag, the step or the class leave the database up.
      if (error instanceof TagNotFoundError || !isDatabaseFailure(error)) this.up(s);
      else this.down(s, error);
      throw error;
    }
    if (!result.ok) {
      const error = new AllocationError(
        '*',
        `${s.name} did not answer within ${this.options.timeoutMs} ms`,
      );
      this.down(s, error);
      throw error;
    }
    this.up(s);
    return result.value;
  }

  private up(s: SourceState): void {
    s.state = 'up';
    s.failures = 0;
    s.retryAt = 0;
  }

  private down(s: SourceState, error: unknown): void {
    s.state = 'down';
    s.lastError = errorText(error);
    s.lastErrorAt = this.clock.now();
    s.failures++;
    const pause = Math.min(MAX_RETRY_MS, this.options.retryMs * 2 ** Math.min(10, s.failures - 1));
    s.retryAt = this.clock.now() + pause;
  }
}

/** An error that says the database is unusable now (not the tag, the step or the class). */
function isDatabaseFailure(error: unknown): boolean {
  return !(error instanceof LeafError) || error instanceof AllocationError;
}
