import type { SequenceGroupSnapshot } from './issuing-term';

/**
 * The groups' fair shares (docs/design.md, "Sequence mode"): this instance against the
 * next in line, as far as this instance sees who issues what (the issuers it forwards to; an
 * instance it does not see issuing issues none). A hand-over needs a surplus of two, a
 * complete view (every group's issuer known) and no other hand-over of this instance in the
 * same round, so that groups do not swing back and forth.
 */
export class GroupBalance {
  private handedOverThisRound = false;

  /** @param snapshots every group of this instance, as it sees them now. */
  constructor(private readonly snapshots: () => readonly SequenceGroupSnapshot[]) {}

  /** A new election round: this instance may hand a group over again. */
  newRound(): void {
    this.handedOverThisRound = false;
  }

  /**
   * True when the instance at `next` (the next in line) issues fewer groups than this one: a
   * free group goes to it first.
   */
  full(next: string): boolean {
    const { mine, issued } = this.view();
    return mine > (issued.get(next) ?? 0);
  }

  /**
   * True when this instance issues at least two more groups than the one at `next`, and may
   * hand one over now (at most one per instance per round, once it knows every group's issuer).
   */
  over(next: string): boolean {
    const { mine, issued, complete } = this.view();
    if (!complete || this.handedOverThisRound || mine - (issued.get(next) ?? 0) < 2) {
      return false;
    }
    this.handedOverThisRound = true;
    return true;
  }

  /** How many groups this instance issues, each other issuer's count, and whether every group's issuer is known. */
  private view(): { mine: number; issued: Map<string, number>; complete: boolean } {
    const snapshots = this.snapshots();
    const issued = new Map<string, number>();
    let mine = 0;
    for (const g of snapshots) {
      if (g.state === 'issuer') mine++;
      else if (g.issuer !== null) issued.set(g.issuer, (issued.get(g.issuer) ?? 0) + 1);
    }
    const complete = snapshots.every((g) => g.state === 'issuer' || g.issuer !== null);
    return { mine, issued, complete };
  }
}

/** How a group asks for its fair share ({@link GroupBalance}; tests give their own). */
export type SequenceBalance = Pick<GroupBalance, 'full' | 'over'>;
