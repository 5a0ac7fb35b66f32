import type { IssuerCampaign } from './issuer-election.port';
import { IssuingGroup, type IssuingWith } from './issuing-group';
import type { IssuingTermOptions } from './issuing-term';
import type { SequenceIssuerStore } from './sequence-issuer-store.port';

/**
 * Settings of one {@link DatabaseSequenceGroup}: `name` is the issuer rows' `name`, `run` the
 * row's `holder` while this process issues, `leaseMs` how long a claim or renewal holds the row
 * (`expires_at = now + leaseMs`, database clock).
 */
export interface DatabaseSequenceGroupOptions
  extends
    IssuingTermOptions,
    Pick<IssuerCampaign, 'name' | 'address' | 'run' | 'leaseMs'>,
    Partial<Pick<IssuerCampaign, 'eligible'>> {
  /**
   * How long to leave a row seen expired to others before claiming it (fair shares: an
   * instance that issues more groups waits longer); none: at once.
   */
  readonly claimDelayMs?: () => number;
}

/**
 * One issuer group of sequence mode whose election is a row of `leaf_sequence_issuer`
 * (docs/design.md, "Sequence mode on the database"); the issuing is {@link IssuingTerm}'s, as
 * with ZooKeeper.
 *
 * - Claim: a candidate takes the row only once it expired on the database's clock, raising its
 *   term in the same statement; the term is the term of this instance's issuing.
 * - Lease: the claim and every renewal (`… WHERE holder = me AND term = my term`) are sent at a
 *   local instant; the lease holds until that instant + `leaseMs` − margin, so it ends on this
 *   host before the row can expire on the database's clock. A renewal that finds the row
 *   claimed by another demotes at once.
 * - Fence: every range allocation of the term checks the row in its own transaction.
 * - Resign: a graceful stop expires the row at once (where it is still ours).
 * - Handing over: an issuer whose allocations keep failing expires its row and claims none
 *   for a lease, so another instance takes the group.
 */
export class DatabaseSequenceGroup extends IssuingGroup {
  /** The issuer's address as last read from the row (null: none, or this instance). */
  private leader: string | null = null;
  /** The row's term when this instance first saw it expired, and when (monotonic). */
  private expiredSeen: { term: bigint; at: number } | null = null;
  /** The term this instance claimed last (the fence of its allocations). */
  private held: bigint | null = null;
  /** After handing over: no claim before this (monotonic). */
  private abstainUntil = Number.NEGATIVE_INFINITY;
  private reachableValue = false;

  constructor(
    private readonly store: SequenceIssuerStore,
    protected override readonly options: DatabaseSequenceGroupOptions,
    using: IssuingWith,
  ) {
    super(options, using);
  }

  /** True when the last round reached the database. */
  override get reachable(): boolean {
    return this.reachableValue;
  }

  /** Expires the row where it is still ours: a successor claims it at its next round. */
  protected override async release(wasIssuer: boolean): Promise<void> {
    if (wasIssuer) await this.giveUp();
  }

  protected override leaderSeen(): string | null {
    return this.leader;
  }

  /** Renews as issuer, else reads the row and claims it when free. */
  protected override async round(): Promise<void> {
    if (this.state === 'resigning') return;
    try {
      if (this.state === 'issuer') await this.renew();
      else await this.lookAndClaim();
      this.reachableValue = true;
    } catch {
      // The database is unreachable: the lease runs down by itself; the next round retries.
      this.reachableValue = false;
    }
  }

  private async renew(): Promise<void> {
    const { name, group, run, leaseMs } = this.options;
    const term = this.held!;
    const localTerm = this.issuer.term;
    const sentAt = this.monotonic();
    const sentAtWall = this.clock.now();
    const ours = await this.store.renew(name, group, run, term, leaseMs);
    if (this.state !== 'issuer' || this.issuer.term !== localTerm) return;
    if (!ours) {
      this.issuer.demote(`the issuer row of group ${group} is no longer ours (term ${term})`);
      return;
    }
    this.issuer.confirm(sentAt, leaseMs, sentAtWall);
    const failing = this.issuer.failing.handOverReason();
    if (failing !== null) {
      this.issuer.demote(`handed over: ${failing}`);
      this.abstainUntil = this.monotonic() + leaseMs;
      await this.giveUp();
    }
  }

  private async lookAndClaim(): Promise<void> {
    const { name, group, run, address, leaseMs } = this.options;
    const row = await this.store.read(name, group);
    if (!row.expired) {
      this.expiredSeen = null;
      this.leader = row.holder === run ? null : row.address;
      // Our own claim whose answer was lost: take the term up with a renewal (its send time
      // starts the lease), rather than leave the group without an issuer for a lease.
      if (row.holder === run && this.state === 'candidate' && this.monotonic() >= this.abstainUntil)
        await this.take(async () =>
          (await this.store.renew(name, group, run, row.term, leaseMs)) ? row.term : null,
        );
      return;
    }
    this.leader = null;
    if (this.state !== 'candidate' || this.options.eligible?.() === false) return;
    const now = this.monotonic();
    if (now < this.abstainUntil) return;
    if (this.expiredSeen?.term !== row.term) this.expiredSeen = { term: row.term, at: now };
    if (now - this.expiredSeen.at < (this.options.claimDelayMs?.() ?? 0)) return;
    await this.take(() =>
      this.store.claim(name, group, { holder: run, address, seenTerm: row.term, leaseMs }),
    );
  }

  /**
   * Becomes the issuer of the term that `write` (a claim, or a renewal of a row naming this
   * process) returns, with a lease from the write's send time; null: the write failed.
   */
  private async take(write: () => Promise<bigint | null>): Promise<void> {
    const { name, group, run, leaseMs } = this.options;
    const sentAt = this.monotonic();
    const sentAtWall = this.clock.now();
    const term = await write();
    if (term === null) return;
    this.held = term;
    if (this.state !== 'candidate') {
      // Resigned while the write was in flight: give the row straight back.
      await this.giveUp();
      return;
    }
    this.issuer.elect(Number(term), sentAt, { name, group, holder: run, term });
    this.issuer.confirm(sentAt, leaseMs, sentAtWall);
  }

  /** Expires the row where it still names our term; never throws. */
  private async giveUp(): Promise<void> {
    const term = this.held;
    if (term === null) return;
    const { name, group, run } = this.options;
    await this.store.resign(name, group, run, term).catch(() => false);
  }
}
