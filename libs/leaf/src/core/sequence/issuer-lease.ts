/**
 * The lease of a sequence issuer (docs/design.md, "Sequence mode"): how long this process
 * may hand out IDs without hearing from ZooKeeper again.
 *
 * A ZooKeeper write that succeeds in the issuer's session was received by the ensemble at or
 * after the moment it was sent, and ZooKeeper expires a session only after it heard nothing
 * from it for the session timeout. So the session, and with it the issuer's election node,
 * lives at least until `sentAt + timeout`; no successor can be elected before. The issuer
 * stops at `sentAt + timeout - margin` by its own monotonic clock: the margin covers clock
 * rates that differ between hosts and the time a follower takes to report the session to the
 * ZooKeeper leader.
 *
 * Time is measured on two clocks and the lease holds only while **both** are within their
 * bound: the monotonic clock (immune to steps of the wall clock) and the wall clock (which,
 * unlike the monotonic clock on some hosts, also counts a suspended machine or VM). A clock
 * that ran further ends the lease sooner; one stepped back cannot prolong it.
 */
export class IssuerLease {
  private until = Number.NEGATIVE_INFINITY;
  private wallUntil = Number.NEGATIVE_INFINITY;
  private revokedReason: string | null = null;

  constructor(
    /** Monotonic milliseconds. */
    private readonly monotonic: () => number,
    /** Subtracted from every bound. */
    private readonly marginMs: number,
    /** Wall-clock milliseconds (the `Clock`'s `now`). */
    private readonly wall: () => number,
  ) {}

  /**
   * A write sent at `sentAt` (monotonic; `sentAtWall` on the wall clock) succeeded in the
   * issuer's session whose timeout is `sessionTimeoutMs`: the lease reaches
   * `sentAt + sessionTimeoutMs - margin`, on each clock. Never lowers the bound; does nothing
   * once revoked.
   */
  confirm(sentAt: number, sessionTimeoutMs: number, sentAtWall: number): void {
    if (this.revokedReason !== null) return;
    const end = sentAt + sessionTimeoutMs - this.marginMs;
    if (end > this.until) this.until = end;
    const wallEnd = sentAtWall + sessionTimeoutMs - this.marginMs;
    if (wallEnd > this.wallUntil) this.wallUntil = wallEnd;
  }

  /** Ends the lease for good (the session expired, the node is gone, the issuer resigns). */
  revoke(reason: string): void {
    this.revokedReason ??= reason;
    this.until = Number.NEGATIVE_INFINITY;
  }

  /** True while the lease is in force now, by both clocks. */
  valid(): boolean {
    return this.monotonic() < this.until && this.wall() < this.wallUntil;
  }

  /** Milliseconds left (negative once it ran out; `-Infinity` before the first confirm). */
  remainingMs(): number {
    return this.until - this.monotonic();
  }

  /** Why the lease is not valid, for errors. */
  describe(): string {
    if (this.revokedReason !== null) return this.revokedReason;
    if (this.until === Number.NEGATIVE_INFINITY) return 'not confirmed yet';
    const late = Math.max(this.monotonic() - this.until, this.wall() - this.wallUntil);
    return `it ran out ${Math.round(late)} ms ago without a confirmed renewal`;
  }
}
