import type { Clock } from '../clock';
import { ConcurrencyLimiter } from '../concurrency-limiter';
import { AllocationRegressedError } from '../errors/allocation.error';
import { ModeDisabledError } from '../errors/mode-disabled.error';
import { TagNotFoundError } from '../errors/tag-not-found.error';
import { monotonicMs, type RangeLoadDetail } from '../leaf-observer';
import type {
  AllocatedRange,
  IssuerFence,
  LeafAllocStore,
  RangeJournalEntry,
} from './leaf-alloc-store.port';
import { RangeGuard } from './range-guard';
import type { SegmentBuffer, SegmentLoadListener, UnusedTail } from './segment-buffer';
import type { SegmentCacheOptions } from './segment-cache.options';

/** A `max_id` found below the high-water mark and repaired by this instance's allocation. */
export interface TagRepair {
  readonly tag: string;
  /** `max_id` as found. */
  readonly maxId: string;
  /** The mark it was raised to. */
  readonly highWater: string;
  readonly kind: 'regression' | 'unconfirmed-commit';
  /** When (the cache's clock, ms). */
  readonly at: number;
}

/** The outcome of handing back one tag's unused tail (`SegmentCache.handBack`). */
export interface HandBackResult extends UnusedTail {
  /** True when `max_id` was lowered to `firstUnused`. */
  readonly handedBack: boolean;
  /** Why it was not attempted or failed, when it did not happen. */
  readonly error?: unknown;
}

/** Repairs remembered for readiness. */
const MAX_REPAIRS_SHOWN = 20;

/**
 * The store calls of a `SegmentCache`'s buffers, the range loads and the hand-back: one
 * concurrency limit across keys (`maxConcurrentLoads`), the duration of each allocation
 * reported to the observer, high-water repairs remembered for readiness, and the
 * {@link RangeGuard} every range passes before anyone sees it.
 */
export class RangeLoader {
  private readonly limiter: ConcurrencyLimiter;
  /** The outcome of the most recent allocation, any tag: `null` = it succeeded (or none yet). */
  private lastError: unknown = null;
  private readonly guard = new RangeGuard();
  /** The newest repair per tag (insertion order = age). */
  private readonly repairs = new Map<string, TagRepair>();

  constructor(
    private readonly store: LeafAllocStore | null,
    /** Only the load limit and the observer: sequence mode's issuer loads through it too. */
    private readonly options: Pick<
      SegmentCacheOptions,
      'maxConcurrentLoads' | 'observer' | 'journal'
    > & {
      /** Which mode's loads these are, for the observer. @default 'segment' */
      readonly mode?: 'segment' | 'sequence';
    },
    private readonly clock: Clock,
    private readonly listener: Pick<SegmentLoadListener, 'rangeRepaired' | 'rangeRefused'> | null,
  ) {
    this.limiter = new ConcurrencyLimiter(options.maxConcurrentLoads);
  }

  /**
   * The buffers' loader: one allocation of `tag`, under the limit, through the guard; `fence`:
   * a sequence issuer's term, checked by the store in the allocation's transaction.
   */
  readonly load = (
    tag: string,
    step: number | undefined,
    fence?: IssuerFence,
  ): Promise<AllocatedRange> => {
    // Taken before the transaction: every range held now was committed before it.
    const floor = this.guard.floor(tag);
    return this.limiter
      .run(() => this.timedAllocate(tag, step, fence))
      .then(
        (range) => {
          if (range.repair) {
            this.repairs.delete(tag);
            this.repairs.set(tag, {
              tag,
              maxId: range.repair.maxId.toString(),
              highWater: range.repair.highWater.toString(),
              kind: range.repair.kind,
              at: this.clock.now(),
            });
            if (this.repairs.size > MAX_REPAIRS_SHOWN) {
              this.repairs.delete(this.repairs.keys().next().value!);
            }
            this.options.observer?.maxIdRegression?.(tag, range.repair.kind, true);
            this.listener?.rangeRepaired?.(range);
          }
          try {
            this.guard.admit(range, floor);
          } catch (error) {
            if (error instanceof AllocationRegressedError) {
              this.options.observer?.maxIdRegression?.(tag, 'range-guard', false);
              this.listener?.rangeRefused?.(error);
            }
            throw error;
          }
          this.lastError = null;
          return range;
        },
        (error: unknown) => {
          // A deleted tag says nothing about the database.
          if (!(error instanceof TagNotFoundError)) this.lastError = error;
          throw error;
        },
      );
  };

  /**
   * Hands back the unused tail of each buffer's newest range, under the same limit as the
   * loads; a buffer with a load in flight is skipped. Never throws: failures are in the
   * results.
   */
  handBack(buffers: Iterable<SegmentBuffer>): Promise<HandBackResult[]> {
    const store = this.store;
    if (!store) return Promise.resolve([]);
    const tails = [...buffers]
      .filter((buffer) => !buffer.isLoading)
      .map((buffer) => buffer.unusedTail())
      .filter((tail): tail is UnusedTail => tail !== null);
    return Promise.all(
      tails.map((tail) =>
        this.limiter
          .run(() => store.handBack(tail.tag, tail.maxId, tail.firstUnused, tail.source))
          .then(
            (handedBack): HandBackResult => ({ ...tail, handedBack }),
            (error: unknown): HandBackResult => ({ ...tail, handedBack: false, error }),
          ),
      ),
    );
  }

  /** The most recent allocation's failure (any tag), or `null` when it succeeded. */
  get lastAllocationError(): unknown {
    return this.lastError;
  }

  /** The newest high-water repair of each tag that had one since start, newest first. */
  highWaterRepairs(): TagRepair[] {
    return [...this.repairs.values()].reverse();
  }

  /** One store allocation, its duration reported to the observer (metrics) when it completes. */
  private timedAllocate(
    tag: string,
    step: number | undefined,
    fence: IssuerFence | undefined,
  ): Promise<AllocatedRange> {
    const store = this.store;
    if (!store) return Promise.reject(new ModeDisabledError('segment'));
    const mode = this.options.mode ?? 'segment';
    const journal = this.options.journal;
    // The journal's entry: who is granted the range (a database-held issuer's term with it).
    const entry: RangeJournalEntry | null = journal
      ? { mode, instance: journal.instance, term: fence?.term ?? null }
      : null;
    // Without a journal, segment mode's calls stay exactly `allocate(tag, step)`.
    const allocate = () =>
      entry
        ? store.allocate(tag, step, fence, entry)
        : fence
          ? store.allocate(tag, step, fence)
          : store.allocate(tag, step);
    const observer = this.options.observer;
    if (!observer?.rangeLoaded) return allocate();
    const started = monotonicMs();
    const report = (range: RangeLoadDetail['range'], error: unknown) =>
      observer.rangeLoaded!(tag, monotonicMs() - started, range !== null, {
        mode,
        step,
        range,
        error,
      });
    return allocate().then(
      (range) => {
        report({ start: range.maxId - BigInt(range.appliedStep), end: range.maxId }, null);
        return range;
      },
      (error: unknown) => {
        // A tag that does not exist had no allocation: a caller naming unknown keys creates
        // no metric series.
        if (!(error instanceof TagNotFoundError)) report(null, error);
        throw error;
      },
    );
  }
}
