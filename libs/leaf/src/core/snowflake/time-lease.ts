import type { Clock } from '../clock';
import { ShuttingDownError } from '../errors/shutting-down.error';
import { TimeLeaseUnavailableError } from '../errors/time-lease-unavailable.error';
import { monotonicMs, type LeafObserver } from '../leaf-observer';
import type { SnowflakeLogger } from './snowflake-logger';
import { messageOf } from '../errors/leaf.error';

/** Result of one durable write of the lease bound. */
export interface LeaseCommit {
  /** The bound now durable everywhere a restart will look (≤ the target asked for). */
  readonly granted: number;
  /** Set when the write was only partly durable (e.g. local file only, ZooKeeper down). */
  readonly degraded?: string;
}

/**
 * Makes a lease bound durable. Implementations write it where a restarted instance will
 * read it (the local state file, the ZooKeeper node) and must not resolve before it is.
 */
export interface LeaseCommitter {
  /**
   * Persists a bound of at least `current` and ideally `target`; returns the bound
   * granted. Never persists anything below `current` (the bound already in force).
   * @throws when nothing could be made durable.
   */
  commit(target: number, now: number, current: number): Promise<LeaseCommit>;
  /**
   * Persists `final` as the bound at shutdown, after the last ID was issued: lowering the
   * bound to what was really used lets a graceful restart start without waiting.
   * Best effort; never throws.
   */
  release(final: number, now: number): Promise<void>;
}

/**
 * The last step of a {@link LeaseCommitter.release}: `write` records the final bound in the
 * local state file at `path`; a failure is logged, never thrown.
 */
export async function recordFinalLease(
  path: string,
  write: () => Promise<void>,
  logger: SnowflakeLogger,
): Promise<void> {
  try {
    await write();
  } catch (error) {
    logger.warn(`Could not record the final time lease in ${path}: ${String(error)}`);
  }
}

/** Settings of a {@link TimeLease}. */
export interface TimeLeaseOptions {
  /** Each extension reaches `now + leaseMs`. */
  readonly leaseMs: number;
  /** A new millisecond closer than this to the bound starts a background extension. */
  readonly renewBeforeMs: number;
  /** After a failed extension, on-demand attempts pause this long (the last error is reported meanwhile). */
  readonly retryBackoffMs: number;
  /** Told how long each extension took (metrics), where it completes. */
  readonly observer?: LeafObserver | null;
}

/** Monitoring view of a lease. */
export interface TimeLeaseSnapshot {
  readonly reservedUntil: number;
  readonly extending: boolean;
  readonly closed: boolean;
  readonly revoked: string | null;
  readonly lastExtendedAt: number | null;
  readonly lastError: string | null;
  readonly degraded: string | null;
}

/**
 * The time lease of one worker ID (docs/design.md, "Snowflake safety").
 *
 * `reservedUntil` is the last millisecond this run may issue IDs in; it only grows, and
 * only after the committer made the larger value durable, so a restarted instance that
 * reads the persisted bound and waits until its clock passes it cannot repeat an ID.
 *
 * - One extension in flight at a time; every caller that needs it awaits the same promise.
 * - `issuableUntil` is what the generator's hot path compares with: the bound, or `-∞`
 *   once the lease is closed or revoked, so the fast path needs no extra flag.
 * - A failed extension never lowers the bound: IDs within the old bound stay valid.
 */
export class TimeLease {
  /** The bound the generator's hot path compares with. */
  issuableUntil: number;
  private bound: number;
  private inflight: Promise<void> | null = null;
  private closed = false;
  private revokedReason: string | null = null;
  private lastExtendedAt: number | null = null;
  private lastAttemptAt = Number.NEGATIVE_INFINITY;
  private lastError: unknown = null;
  private degraded: string | null = null;
  private readonly stopListeners: Array<() => void> = [];

  constructor(
    /** The worker ID this lease belongs to (for errors). */
    readonly workerId: number,
    /** The bound already durable when the lease is created. */
    initialBound: number,
    private readonly committer: LeaseCommitter,
    private readonly clock: Clock,
    private readonly options: TimeLeaseOptions,
  ) {
    this.bound = initialBound;
    this.issuableUntil = initialBound;
  }

  /** The last millisecond IDs may be issued in (durable). */
  get reservedUntil(): number {
    return this.bound;
  }

  /** True while an extension is in flight. */
  get extending(): boolean {
    return this.inflight !== null;
  }

  /** The in-flight extension, if any (resolves, never rejects). */
  get pending(): Promise<void> {
    return this.inflight ? this.inflight.catch(() => undefined) : Promise.resolve();
  }

  /**
   * Extends the bound to `now + leaseMs`; joins the extension in flight if there is one.
   * @throws {TimeLeaseUnavailableError} when no extension could be made durable.
   * @throws {ShuttingDownError} once {@link release} was called.
   */
  extend(): Promise<void> {
    const blocked = this.inflight ? null : this.blockedError();
    if (blocked) return Promise.reject(blocked);
    return (this.inflight ??= this.run().finally(() => {
      this.inflight = null;
    }));
  }

  /**
   * Like {@link extend}, but if an extension is in flight, waits for it and starts a fresh
   * one: used after a reconnect, so ZooKeeper gets the current bound even when the
   * extension in flight was decided while it was down.
   * @throws as {@link extend}.
   */
  async extendAfterCurrent(): Promise<void> {
    await this.pending;
    return this.extend();
  }

  /**
   * Hot-path hint, called once per new millisecond: starts a background extension when the
   * bound is less than `renewBeforeMs` away and no attempt is in flight or backing off.
   */
  maybeRenew(now: number): void {
    if (this.bound - now >= this.options.renewBeforeMs || this.inflight !== null) return;
    if (now - this.lastAttemptAt < this.options.retryBackoffMs) return;
    // The outcome is recorded in lastError; nobody awaits this one.
    this.extend().catch(() => undefined);
  }

  /**
   * Resolves once `timestamp` is within the bound, extending it if needed.
   * @throws {TimeLeaseUnavailableError} when the bound cannot be extended that far.
   * @throws {ShuttingDownError} once {@link release} was called.
   */
  async cover(timestamp: number): Promise<void> {
    if (timestamp <= this.issuableUntil) return;
    const blocked = this.blockedError();
    if (blocked) throw blocked;
    const failure = this.lastError !== null ? this.describe(this.lastError) : this.degraded;
    if (
      failure !== null &&
      this.inflight === null &&
      this.clock.now() - this.lastAttemptAt < this.options.retryBackoffMs
    ) {
      // Right after a failed attempt, answer at once instead of hammering the stores per request.
      throw this.unavailable(failure, this.lastError);
    }
    await this.extend();
    if (timestamp > this.issuableUntil) {
      throw this.unavailable(
        this.degraded ?? `the extension reached only ${this.bound}`,
        this.lastError,
      );
    }
  }

  /**
   * Stops the lease for good (the worker's registration is no longer trusted); every later
   * request fails with {@link TimeLeaseUnavailableError} carrying `reason`.
   */
  revoke(reason: string): void {
    this.revokedReason ??= reason;
    this.stopIssuing();
  }

  /**
   * Registers `listener`, called once the lease stops for good ({@link revoke} or
   * {@link release}): the generator uses it to stop within the current millisecond too.
   */
  onStop(listener: () => void): void {
    this.stopListeners.push(listener);
  }

  /**
   * Closes the lease at shutdown: nothing is issued any more, the extension in flight is
   * awaited, and the bound is persisted as `lastIssued()` (the last millisecond this run
   * really used, read once nothing new can start). Never throws.
   */
  async release(lastIssued: () => number): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.stopIssuing();
    await this.pending;
    await this.committer.release(Math.min(lastIssued(), this.bound), this.clock.now());
  }

  /** Monitoring view. */
  snapshot(): TimeLeaseSnapshot {
    return {
      reservedUntil: this.bound,
      extending: this.inflight !== null,
      closed: this.closed,
      revoked: this.revokedReason,
      lastExtendedAt: this.lastExtendedAt,
      lastError: this.lastError === null ? null : this.describe(this.lastError),
      degraded: this.degraded,
    };
  }

  private async run(): Promise<void> {
    const now = this.clock.now();
    this.lastAttemptAt = now;
    const target = now + this.options.leaseMs;
    const observer = this.options.observer;
    const started = observer?.leaseExtended ? monotonicMs() : 0;
    let result: LeaseCommit;
    try {
      result = await this.committer.commit(target, now, this.bound);
    } catch (error) {
      this.lastError = error;
      observer?.leaseExtended?.(monotonicMs() - started, 'error', error);
      throw this.unavailable(this.describe(error), error);
    }
    observer?.leaseExtended?.(
      monotonicMs() - started,
      result.degraded === undefined ? 'ok' : 'degraded',
    );
    this.degraded = result.degraded ?? null;
    // A lease closed or revoked while the write was in flight keeps issuing nothing.
    if (result.granted > this.bound) {
      this.bound = result.granted;
      if (!this.closed && this.revokedReason === null) this.issuableUntil = result.granted;
      this.lastExtendedAt = now;
    }
    if (result.granted < target && result.granted <= now) {
      this.lastError = new Error(result.degraded ?? 'the lease could not be extended');
      throw this.unavailable(this.describe(this.lastError));
    }
    this.lastError = null;
  }

  private stopIssuing(): void {
    this.issuableUntil = Number.NEGATIVE_INFINITY;
    for (const listener of this.stopListeners.splice(0)) listener();
  }

  private blockedError(): Error | null {
    if (this.closed) return new ShuttingDownError();
    if (this.revokedReason !== null) return this.unavailable(this.revokedReason);
    return null;
  }

  private unavailable(reason: string, cause?: unknown): TimeLeaseUnavailableError {
    return new TimeLeaseUnavailableError(this.workerId, this.bound, reason, {
      cause,
      retryAfterMs: this.options.retryBackoffMs,
    });
  }

  private describe(error: unknown): string {
    if (error === null || error === undefined) return 'unknown error';
    return messageOf(error);
  }
}
