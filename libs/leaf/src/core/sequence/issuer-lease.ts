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
 * ZooKeeper leader. Times are monotonic milliseconds (never the wall clock, which steps).
 */
export class IssuerLease {
  private until = Number.NEGATIVE_INFINITY;
  private revokedReason: string | null = null;

  constructor(
    /** Monotonic milliseconds. */
    private readonly monotonic: () => number,
    /** Subtracted from every bound. */
    private readonly marginMs: number,
  ) {}

  /**
   * A write sent at `sentAt` (monotonic) succeeded in the issuer's session whose timeout is
   * `sessionTimeoutMs`: the lease reaches `sentAt + sessionTimeoutMs - margin`. Never lowers
   * the bound; does nothing once revoked.
   */
  confirm(sentAt: number, sessionTimeoutMs: number): void {
    if (this.revokedReason !== null) return;
    const end = sentAt + sessionTimeoutMs - this.marginMs;
    if (end > this.until) this.until = end;
  }

  /** Ends the lease for good (the session expired, the node is gone, the issuer resigns). */
  revoke(reason: string): void {
    this.revokedReason ??= reason;
    this.until = Number.NEGATIVE_INFINITY;
  }

  /** True while the lease is in force now. */
  valid(): boolean {
    return this.monotonic() < this.until;
  }

  /** Milliseconds left (negative once it ran out; `-Infinity` before the first confirm). */
  remainingMs(): number {
    return this.until - this.monotonic();
  }

  /** Why the lease is not valid, for errors. */
  describe(): string {
    if (this.revokedReason !== null) return this.revokedReason;
    if (this.until === Number.NEGATIVE_INFINITY) return 'not confirmed yet';
    return `it ran out ${Math.round(this.monotonic() - this.until)} ms ago without a ZooKeeper confirmation`;
  }
}
