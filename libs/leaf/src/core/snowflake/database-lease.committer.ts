import { withTimeout } from '../with-timeout';
import type { SnowflakeLogger } from './snowflake-logger';
import { recordFinalLease, type LeaseCommit, type LeaseCommitter } from './time-lease';
import type { HeldWorkerLease, WorkerLeaseStore } from './worker-lease-store.port';
import type { WorkerStateStore } from './worker-state';

/** The limits and clocks of a lease row's claims and renewals (a worker's or a region's). */
export interface LeaseCallTiming {
  /** The lease row's liveness: each claim or renewal keeps it `leaseMs` past the database's now. */
  readonly leaseMs: number;
  /** The holder stops this long before the row could expire. */
  readonly marginMs: number;
  /** Most time one call may take. */
  readonly callTimeoutMs: number;
  /** A monotonic clock in milliseconds (`performance.now()`; a fake one in tests). */
  readonly monotonic: () => number;
  /** The wall clock (the lease's clock). */
  readonly now: () => number;
}

/**
 * The bound a renewal grants (docs/design.md, "The database variant"): the row stays live
 * until `sentMono + leaseMs` on the database's clock at the earliest, since the renewal
 * reached it after it was sent; the holder stops `marginMs` before that, measured on its own
 * monotonic clock. As a wall-clock bound: at most the horizon written (`sentWall + leaseMs −
 * marginMs`), and at most what is left of the monotonic lease from `wallNow` on (a wall clock
 * stepped back during the call gains nothing). A bound at or before `wallNow` grants nothing.
 */
export function renewedBound(args: {
  readonly sentWall: number;
  readonly sentMono: number;
  readonly wallNow: number;
  readonly monoNow: number;
  readonly leaseMs: number;
  readonly marginMs: number;
}): number {
  const live = args.leaseMs - args.marginMs;
  const remaining = args.sentMono + live - args.monoNow;
  return Math.min(args.sentWall + live, args.wallNow + remaining);
}

/**
 * Sends one claim or renewal of a lease row: reads both clocks first (its answer may come
 * late), hands `call` the horizon to record, `limit(sentWall + leaseMs − marginMs)`, and
 * waits for the answer `callTimeoutMs` at most.
 * @returns `null` when no answer came in time; else the answer (`value`), the wall time it was
 *   sent and the horizon recorded, the milliseconds since (`elapsed()`, monotonic) and the
 *   bound it proves now (`bound()`: {@link renewedBound}, at most the horizon).
 * @throws the call's error.
 */
export async function sendLeaseCall<T>(
  timing: LeaseCallTiming,
  call: (horizon: number) => Promise<T>,
  limit: (horizon: number) => number = (horizon) => horizon,
) {
  const { leaseMs, marginMs, monotonic, now } = timing;
  const sentMono = monotonic();
  const sentWall = now();
  const horizon = limit(sentWall + leaseMs - marginMs);
  const answer = await withTimeout(call(horizon), timing.callTimeoutMs);
  if (!answer.ok) return null;
  return {
    value: answer.value,
    sentWall,
    horizon,
    elapsed: () => monotonic() - sentMono,
    bound: () => {
      const [wallNow, monoNow] = [now(), monotonic()];
      return Math.min(
        horizon,
        renewedBound({ sentWall, sentMono, wallNow, monoNow, leaseMs, marginMs }),
      );
    },
  };
}

/**
 * Makes lease bounds durable in the database's lease row and the local state file
 * (docs/design.md, "The database variant").
 *
 * - Each commit renews the row, conditional on this run's epoch, and records the horizon
 *   `sentWall + leaseMs − marginMs` before anything up to it is issued; the bound granted
 *   never passes the horizon written, nor the liveness measured on the monotonic clock.
 * - No local-only extension: a successor reads only the row.
 * - A renewal answered "not yours" (another instance claimed the worker ID) calls
 *   {@link DatabaseLeaseCommitter.onLost}: the lease is revoked for good.
 * - A renewal that failed or timed out grants nothing; it may land later, and then only
 *   raises the row's expiry and horizon: successors stay on the safe side.
 */
export class DatabaseLeaseCommitter implements LeaseCommitter {
  /** Called once when the row turns out to be another instance's. */
  onLost: ((reason: string) => void) | null = null;
  /** Why the lease is lost for good, or `null`. */
  lostReason: string | null = null;
  /** Wall time at which the last successful renewal was sent; `null` before the first. */
  lastRenewal: number | null = null;

  constructor(
    private readonly store: WorkerLeaseStore,
    private readonly lease: HeldWorkerLease,
    private readonly file: WorkerStateStore,
    private readonly options: LeaseCallTiming,
    private readonly logger: SnowflakeLogger,
    /** The horizon this run last recorded in the row; at the claim, its previous holder's. */
    public recordedHorizon: number,
  ) {}

  /**
   * See {@link LeaseCommitter.commit}; `target` is ignored beyond capping (the row decides).
   * @throws when the renewal failed, timed out or found the lease lost (nothing granted).
   */
  async commit(target: number, _now: number, current: number): Promise<LeaseCommit> {
    if (this.lostReason !== null) throw new Error(this.lostReason);
    const sent = await sendLeaseCall(
      this.options,
      (horizon) => this.store.renew(this.lease, this.options.leaseMs, horizon),
      (horizon) => Math.max(current, Math.min(target, horizon)),
    );
    if (!sent) {
      throw new Error(
        `the lease renewal in ${this.store.description} did not answer within ${this.options.callTimeoutMs} ms`,
      );
    }
    if (!sent.value) {
      this.lostReason = `worker ${this.lease.workerId} was claimed by another instance in ${this.store.description} (epoch ${this.lease.epoch} is no longer the row's): this instance stops issuing for good; restart it to claim a worker ID again`;
      this.logger.error(`Snowflake worker stops issuing IDs: ${this.lostReason}`);
      this.onLost?.(this.lostReason);
      throw new Error(this.lostReason);
    }
    this.recordedHorizon = Math.max(this.recordedHorizon, sent.horizon);
    this.lastRenewal = sent.sentWall;
    const granted = sent.bound();
    if (granted > current) await this.writeFile(granted, sent.sentWall);
    return granted > current || granted >= target
      ? { granted }
      : { granted, degraded: `the renewal answered too late (${sent.elapsed()} ms)` };
  }

  /** See {@link LeaseCommitter.release}. Never throws. */
  async release(final: number, now: number): Promise<void> {
    if (this.lostReason === null) {
      try {
        const answer = await withTimeout(
          this.store.release(this.lease, final),
          this.options.callTimeoutMs,
        );
        if (answer.ok && answer.value) this.recordedHorizon = final;
        else
          this.logger.warn(
            `Could not release worker ${this.lease.workerId} in ${this.store.description} (${answer.ok ? 'no longer this run’s' : 'no answer in time'}); a successor waits for its expiry`,
          );
      } catch (error) {
        this.logger.warn(
          `Could not release the worker lease in ${this.store.description}: ${String(error)}`,
        );
      }
    }
    await recordFinalLease(this.file.path, () => this.writeFile(final, now), this.logger);
  }

  private writeFile(reservedUntil: number, now: number): Promise<void> {
    return this.file.write({
      workerId: this.lease.workerId,
      reservedUntil,
      zkNode: null,
      zkSyncedAt: this.lastRenewal,
      zkHorizon: this.recordedHorizon,
      run: this.lease.run,
      updatedAt: now,
    });
  }
}
