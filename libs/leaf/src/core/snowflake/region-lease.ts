import type { Clock } from '../clock';
import { DataCenterHeldError, RegionLeaseUnavailableError } from '../errors/region-lease.error';
import { sendLeaseCall, type LeaseCallTiming } from './database-lease.committer';
import type { RegionClaim, RegionRegistry } from './region-registry.port';
import type { SnowflakeLogger } from './snowflake-logger';
import { messageOf } from '../errors/leaf.error';

/** A region's lease settings (`snowflake.region`). */
export interface RegionLeaseSettings extends Pick<
  LeaseCallTiming,
  'leaseMs' | 'marginMs' | 'callTimeoutMs'
> {
  /** This region's name, the lease's holder. */
  readonly region: string;
  /** The data-centre ID leased (and encoded in every ID). */
  readonly dataCenterId: number;
}

/** What {@link RegionLease.claim} needs besides the settings. */
export interface RegionLeaseContext {
  /** The module's `name` (the namespace). */
  readonly name: string;
  readonly registry: RegionRegistry;
  readonly clock: Clock;
  /** Monotonic milliseconds (`performance.now()`; a fake one in tests). */
  readonly monotonic: () => number;
  /** How long a start retries a registry that does not answer. */
  readonly startupMaxWaitMs: number;
  readonly logger: SnowflakeLogger;
}

/** Monitoring view of a region lease (readiness and health detail). */
export interface RegionLeaseSnapshot {
  readonly region: string;
  readonly dataCenterId: number;
  readonly registry: string;
  readonly epoch: string;
  /** The last millisecond the last successful claim or renewal proved (wall clock). */
  readonly provenUntil: number;
  /** How long is left of it from now (0 once passed). */
  readonly leftMs: number;
  /** Wall time the last successful claim or renewal was sent. */
  readonly lastRenewalAt: number;
  readonly lastError: string | null;
  /** Why the lease is lost for good (another region took the ID), or `null`. */
  readonly lost: string | null;
}

/** First pause after a failed start-up claim; doubles up to 1 s. */
const FIRST_RETRY_MS = 100;

/**
 * One instance's hold on its region's data-centre ID (docs/design.md, "Regions"): claimed at
 * start, renewed in the background. Each successful claim or renewal, sent at wall time `s`
 * (monotonic `m`), first records the horizon `s + leaseMs − marginMs` in the registry's row,
 * then proves the lease until that horizon, cut to what is left of `leaseMs − marginMs` on the
 * monotonic clock since sending ({@link sendLeaseCall}, whole milliseconds: the time lease's
 * stores keep integers). The registry's row stays live
 * until `s + leaseMs` (its clock) at the earliest, so the instance stops before another region
 * can take the ID, and whoever takes it starts past the horizon. The snowflake time lease is
 * capped at {@link bound} (`RegionCappedCommitter`): one bound for the generator, one error.
 */
export class RegionLease {
  private lastError: string | null = null;
  private lostReason: string | null = null;
  private readonly lostListeners: Array<(reason: string) => void> = [];

  private constructor(
    private readonly context: RegionLeaseContext,
    readonly settings: RegionLeaseSettings,
    private readonly timing: LeaseCallTiming,
    /** The claim: epoch and floor. */
    readonly claim: RegionClaim,
    /** The last millisecond the last successful claim or renewal proved. */
    private proven: number,
    /** Wall time that claim or renewal was sent. */
    private lastSent: number,
  ) {}

  /**
   * Claims the data-centre ID for the region, retrying a registry that fails or does not
   * answer for up to `startupMaxWaitMs`.
   * @throws {DataCenterHeldError} another region holds a live lease on it (at once, no retry).
   * @throws {RegionLeaseUnavailableError} the registry did not answer in time, or the claim
   *   answered too late to prove anything.
   */
  static async claim(
    context: RegionLeaseContext,
    settings: RegionLeaseSettings,
  ): Promise<RegionLease> {
    const { registry, clock, name } = context;
    const timing = { ...settings, monotonic: context.monotonic, now: () => clock.now() };
    const { dataCenterId, region, leaseMs } = settings;
    const started = clock.now();
    let retryMs = FIRST_RETRY_MS;
    for (;;) {
      let failure: string;
      try {
        const sent = await sendLeaseCall(timing, (horizon) =>
          registry.claim({ name, dataCenterId, region, leaseMs, horizon }),
        );
        if (!sent) throw new Error(`no answer within ${settings.callTimeoutMs} ms`);
        if ('held' in sent.value) {
          const row = sent.value.held;
          throw new DataCenterHeldError(dataCenterId, region, row.region, row.expiresAt);
        }
        const proven = Math.floor(sent.bound());
        if (proven > clock.now()) {
          const { claimed } = sent.value;
          context.logger.log(
            `Region "${region}" ${claimed.how === 'joined' ? 'holds' : 'took'} data-centre ID ${dataCenterId} in ${registry.description} (epoch ${claimed.epoch}); proven until ${new Date(proven).toISOString()}`,
          );
          return new RegionLease(context, settings, timing, claimed, proven, sent.sentWall);
        }
        failure = 'the claim answered too late to prove any time';
      } catch (error) {
        if (error instanceof DataCenterHeldError) throw error;
        failure = messageOf(error);
      }
      if (clock.now() - started + retryMs > context.startupMaxWaitMs) {
        throw new RegionLeaseUnavailableError(
          `Claiming data-centre ID ${dataCenterId} for region "${region}" in ${registry.description} failed for ${context.startupMaxWaitMs} ms (${failure}). ` +
            'Fix: make the region registry reachable and run its migrations (leaf_region_lease).',
        );
      }
      await clock.sleep(retryMs);
      retryMs = Math.min(retryMs * 2, 1000);
    }
  }

  /** The last millisecond this instance may issue IDs in; `-∞` once lost. */
  get bound(): number {
    return this.lostReason === null ? this.proven : Number.NEGATIVE_INFINITY;
  }

  /** IDs are issued only in milliseconds after this one (the previous region's horizon). */
  get floor(): number {
    return this.claim.floor;
  }

  /** Registers `listener`, called once if the lease turns out to be another region's. */
  onLost(listener: (reason: string) => void): void {
    this.lostListeners.push(listener);
  }

  /**
   * One renewal: records the new horizon and, once the registry confirms, proves the lease
   * further. A failure or timeout proves nothing (the bound stays); a row that names another
   * region or epoch loses the lease for good.
   * @throws {RegionLeaseUnavailableError} when the renewal failed, timed out or found the lease lost.
   */
  async renew(): Promise<void> {
    if (this.lostReason !== null) throw new RegionLeaseUnavailableError(this.lostReason);
    const { settings, context } = this;
    const sent = await sendLeaseCall(this.timing, (horizon) =>
      context.registry.renew(this.claim, settings.leaseMs, horizon),
    ).catch((error: unknown) => {
      throw this.failed(messageOf(error), error);
    });
    if (!sent) throw this.failed(`no answer within ${settings.callTimeoutMs} ms`);
    if (!sent.value) {
      this.lostReason = `data-centre ID ${settings.dataCenterId} was taken by another region in ${context.registry.description} (epoch ${this.claim.epoch} of region "${settings.region}" is no longer the row's): this instance stops issuing for good; restart it once the region holds an ID again`;
      this.lastError = this.lostReason;
      context.logger.error(`Snowflake stops issuing IDs: ${this.lostReason}`);
      for (const listener of this.lostListeners.splice(0)) listener(this.lostReason);
      throw new RegionLeaseUnavailableError(this.lostReason);
    }
    this.proven = Math.max(this.proven, Math.floor(sent.bound()));
    this.lastSent = Math.max(this.lastSent, sent.sentWall);
    this.lastError = null;
  }

  /**
   * Why no ID may be issued at `now` because of the region lease, or `null`: lost, or the
   * proven time passed (the registry unreachable for about `leaseMs − marginMs`).
   */
  problem(now: number): string | null {
    if (this.lostReason !== null) return this.lostReason;
    if (now <= this.proven) return null;
    return `the lease of data-centre ID ${this.settings.dataCenterId} (region "${this.settings.region}") is proven only until ${new Date(this.proven).toISOString()}${this.lastError ? ` (last renewal: ${this.lastError})` : ''}`;
  }

  /** Monitoring view at `now`. */
  snapshot(now: number): RegionLeaseSnapshot {
    return {
      region: this.settings.region,
      dataCenterId: this.settings.dataCenterId,
      registry: this.context.registry.description,
      epoch: String(this.claim.epoch),
      provenUntil: this.proven,
      leftMs: this.lostReason === null ? Math.max(0, this.proven - now) : 0,
      lastRenewalAt: this.lastSent,
      lastError: this.lastError,
      lost: this.lostReason,
    };
  }

  private failed(reason: string, cause?: unknown): RegionLeaseUnavailableError {
    this.lastError = `failed: ${reason}`;
    return new RegionLeaseUnavailableError(
      `Renewing the lease of data-centre ID ${this.settings.dataCenterId} (region "${this.settings.region}") in ${this.context.registry.description} failed (${reason}); IDs are issued until ${new Date(this.proven).toISOString()}`,
      { cause },
    );
  }
}
