import type { Clock } from '../clock';
import { LeafError } from '../errors/leaf.error';
import {
  SequenceFencedError,
  SequenceLeaseExpiredError,
  SequenceNoIssuerError,
} from '../errors/sequence.error';
import type { AllocatedRange, IssuerFence } from '../segment/leaf-alloc-store.port';
import { SegmentBuffer, type SegmentBufferOptions } from '../segment/segment-buffer';
import { ExpiringKeys } from '../expiring-keys';
import { TagNotFoundError } from '../errors/tag-not-found.error';
import { FailureStreak } from './failure-streak';
import { IssuerLease } from './issuer-lease';
import type { SequenceGroupListener } from './sequence-group.options';

/** How long a key the table did not have is refused without a transaction. */
const UNKNOWN_KEY_TTL_MS = 5000;
/** Unknown keys remembered at most per group. */
const UNKNOWN_KEY_CACHE_SIZE = 10_000;

/**
 * Where a group is in its life: `candidate` (another instance issues, or none yet), `issuer`
 * (elected, issuing while its lease holds), `resigning` (stopped issuing, giving the group
 * up), `stopped` (closed).
 */
export type SequenceGroupState = 'candidate' | 'issuer' | 'resigning' | 'stopped';

/** Monitoring view of a group. */
export interface SequenceGroupSnapshot {
  readonly group: number;
  readonly state: SequenceGroupState;
  readonly term: number;
  /** The issuer's address as this instance knows it (itself while issuing), or null. */
  readonly issuer: string | null;
  /** Milliseconds of lease left while issuing, else null. */
  readonly leaseRemainingMs: number | null;
  /** Keys holding a buffer in the current term (none once it ends; unknown keys never do). */
  readonly keys: number;
  /**
   * Elected, but waiting this long before its first ID: its ZooKeeper session is younger than
   * the session timeout (docs/design.md, "A ZooKeeper that forgot"); else null.
   */
  readonly startsInMs: number | null;
  /** Election nodes in the group at the last look (ZooKeeper; the database: 0). */
  readonly candidates: number;
  readonly elections: number;
}

/** A range allocation, with the issuer's fence when the election is held in the database. */
export type FencedRangeLoader = (
  tag: string,
  step: number | undefined,
  fence?: IssuerFence,
) => Promise<AllocatedRange>;

/** Settings of an {@link IssuingTerm}. */
export interface IssuingTermOptions {
  /** Label of the group in errors and metrics. */
  readonly group: number;
  /** Subtracted from every lease bound (see `IssuerLease`). */
  readonly leaseMarginMs: number;
  /** The per-key buffers of a term (segment mode's settings). */
  readonly buffer: SegmentBufferOptions;
  /**
   * An issuer whose buffer ran dry and whose allocations have failed this long hands the group
   * over (when another candidate waits), as one that cannot renew its lease does.
   */
  readonly resignAfterFailingMs: number;
}

/**
 * The issuing half of a sequence group, shared by both elections (ZooKeeper's line and the
 * database's row; docs/design.md, "Sequence mode"):
 *
 * - Terms: each election starts a term with new, empty per-key buffers, so its first ID of a
 *   key comes from a range allocated after the election, above every range granted before.
 * - Issue: IDs are taken from the term's buffer in order, and handed out only if, right after
 *   the take and in the same synchronous step, this instance is still the issuer of that term
 *   with its lease in force. Otherwise they are dropped (a gap) and the call refused.
 * - Fence: with a database election every allocation carries the term; a refusal
 *   ({@link SequenceFencedError}) demotes at once.
 */
export class IssuingTerm {
  state: SequenceGroupState = 'candidate';
  term = 0;
  elections = 0;
  private lease: IssuerLease;
  /** Per key of `leaf_alloc` asked for in this term (a key whose first load failed is dropped). */
  private buffers = new Map<string, SegmentBuffer>();
  /**
   * Keys the table did not have, refused without a transaction for
   * {@link UNKNOWN_KEY_TTL_MS}; at most {@link UNKNOWN_KEY_CACHE_SIZE}, least recently used out.
   */
  private readonly unknown = new ExpiringKeys(UNKNOWN_KEY_CACHE_SIZE);
  /** How long this term's allocations have failed with its buffer dry. */
  readonly failing: FailureStreak;
  /** The current term issues from this moment on (monotonic). */
  private issuableFrom = Number.POSITIVE_INFINITY;
  /** The current term is past {@link issuableFrom}: the issue path reads no clock for it. */
  private started = false;
  private fence: IssuerFence | null = null;

  constructor(
    private readonly loader: FencedRangeLoader,
    private readonly options: IssuingTermOptions,
    private readonly clock: Clock,
    private readonly monotonic: () => number,
    private readonly listener: SequenceGroupListener | null,
  ) {
    this.lease = this.newLease();
    this.failing = new FailureStreak(options.resignAfterFailingMs, monotonic);
  }

  /** True while this instance is the issuer, past its start, and its lease is in force. */
  get issuing(): boolean {
    return this.state === 'issuer' && this.startsInMs() === null && this.lease.valid();
  }

  /**
   * A new term: fresh buffers and lease (confirmed by the caller), issuing from `issuableFrom`
   * (monotonic), each allocation fenced by `fence` when given.
   */
  elect(term: number, issuableFrom: number, fence: IssuerFence | null): void {
    this.dropBuffers();
    this.lease = this.newLease();
    this.term = term;
    this.elections++;
    this.state = 'issuer';
    this.fence = fence;
    this.failing.clear();
    this.started = false;
    this.issuableFrom = issuableFrom;
    this.listener?.elected?.(this.options.group, term);
  }

  /** A renewal sent at `sentAt` (monotonic; `sentAtWall` on the wall clock) held for `durationMs`. */
  confirm(sentAt: number, durationMs: number, sentAtWall: number): void {
    if (this.state === 'issuer') this.lease.confirm(sentAt, durationMs, sentAtWall);
  }

  /** Stops issuing (back to candidate); nothing when not the issuer. */
  demote(reason: string): void {
    if (this.state !== 'issuer') return;
    this.state = 'candidate';
    this.lease.revoke(reason);
    this.dropBuffers();
    this.listener?.demoted?.(this.options.group, reason);
  }

  /**
   * Graceful stop, first step: refuses every later call at once.
   * @returns whether this instance was the issuer.
   */
  beginResign(): boolean {
    const wasIssuer = this.state === 'issuer';
    this.state = 'resigning';
    this.lease.revoke('resigned');
    this.dropBuffers();
    if (wasIssuer) this.listener?.demoted?.(this.options.group, 'resigned');
    return wasIssuer;
  }

  /** Keys with a buffer in this term (monitoring). */
  get keys(): number {
    return this.buffers.size;
  }

  /** Milliseconds of lease left (rounded, ≥ 0). */
  leaseRemainingMs(): number {
    return Math.max(0, Math.round(this.lease.remainingMs()));
  }

  /** Milliseconds until an elected term may issue, or null (started, or not elected). */
  startsInMs(): number | null {
    if (this.started) return null;
    const wait = this.issuableFrom - this.monotonic();
    if (wait > 0) return Math.ceil(wait);
    this.started = true;
    return null;
  }

  /**
   * `count` consecutive IDs `[start, end)` of `key`, above everything this group issued
   * before for it, in this term or an earlier one, on any instance.
   * @throws {SequenceNoIssuerError} when this instance is not the issuer (or stopped being it).
   * @throws {SequenceLeaseExpiredError} when its lease is not in force.
   * @throws {LeafError} the range allocation's own error (unknown tag, database down, ...).
   */
  async issue(key: string, count: number): Promise<{ start: bigint; end: bigint }> {
    const term = this.term;
    this.assertIssuing(key, term);
    if (this.unknown.has(key, this.monotonic())) throw new TagNotFoundError(key);
    let buffer = this.buffers.get(key);
    if (!buffer) {
      const fence = this.fence ?? undefined; // this term's, for as long as the buffer lives
      const load = (tag: string, step: number | undefined) => this.loader(tag, step, fence);
      buffer = new SegmentBuffer(key, load, this.options.buffer, this.clock);
      this.buffers.set(key, buffer);
    }
    let range: { start: bigint; end: bigint };
    try {
      // The first range of a term takes the row's step; a bare takeRange would take `count`.
      if (!buffer.initialized) await buffer.warm();
      range = await buffer.takeRange(count);
    } catch (error) {
      if (!buffer.initialized && this.buffers.get(key) === buffer) {
        // Nothing was ever issued from it: a key that is not in the table (or whose first load
        // failed) keeps no state; the next call starts afresh.
        this.buffers.delete(key);
        if (error instanceof TagNotFoundError) {
          this.unknown.add(key, this.monotonic() + UNKNOWN_KEY_TTL_MS);
        }
      }
      if (error instanceof SequenceFencedError && this.term === term) {
        this.demote(`deposed: ${error.message}`);
      }
      if (this.term !== term || this.state !== 'issuer') {
        throw new SequenceNoIssuerError(key, 'this instance stopped issuing', { cause: error });
      }
      this.failing.failed(error);
      throw error instanceof LeafError
        ? error
        : new SequenceNoIssuerError(key, String(error), { cause: error });
    }
    // The check after the take: see the class comment (docs/design.md, "Sequence mode").
    this.assertIssuing(key, term);
    this.failing.clear();
    return range;
  }

  private assertIssuing(key: string, term: number): void {
    if (this.state !== 'issuer' || this.term !== term) {
      throw new SequenceNoIssuerError(key, 'this instance is not the issuer of its group');
    }
    const wait = this.startsInMs();
    if (wait !== null) {
      throw new SequenceNoIssuerError(
        key,
        `the new issuer starts in ${wait} ms (its ZooKeeper session is younger than the session timeout)`,
      );
    }
    if (!this.lease.valid()) throw new SequenceLeaseExpiredError(key, this.lease.describe());
  }

  private newLease(): IssuerLease {
    return new IssuerLease(this.monotonic, this.options.leaseMarginMs, () => this.clock.now());
  }

  private dropBuffers(): void {
    for (const buffer of this.buffers.values()) buffer.seal();
    this.buffers = new Map();
  }
}
