import type { IssuerCampaign } from './issuer-election.port';
import type { IssuingTermOptions } from './issuing-term';

/** Settings of one `SequenceGroup`; `run` names this process's election nodes. */
export interface SequenceGroupOptions
  extends IssuingTermOptions, Pick<IssuerCampaign, 'address' | 'run'> {
  /** The group's election directory, e.g. `/sequence/leaf/groups/0`. */
  readonly root: string;
  /** The requested ZooKeeper session timeout (the granted one is used when smaller). */
  readonly sessionTimeoutMs: number;
  /**
   * How old the ZooKeeper session must be before a term elected in it issues (the session
   * timeout; docs/design.md, "A ZooKeeper that forgot"). Only unit tests of other rules set 0.
   */
  readonly freshSessionWaitMs: number;
  /** Fair shares of the groups among the instances (see {@link SequenceBalance}); none: no balancing. */
  readonly balance?: SequenceBalance;
  /** False while this instance must not stand for election (its address is not checked yet). */
  readonly eligible?: () => boolean;
}

/**
 * How many groups this instance issues for, against its fair share: one group each for the
 * instances at the least, `ceil(groups / instances)` at the most.
 */
export interface SequenceBalance {
  /**
   * True when the instance at `next` (the next in line) issues fewer groups than this one: a
   * free group goes to it first.
   */
  full(next: string): boolean;
  /**
   * True when this instance issues at least two more groups than the one at `next`, and may
   * hand one over now (at most one per instance per round, once it knows every group's issuer).
   */
  over(next: string): boolean;
}

/** Told of a group's changes (metrics, logs); never on the hot path. */
export interface SequenceGroupListener {
  /** This instance became the issuer (a new term). */
  elected?(group: number, term: number): void;
  /** This instance stopped being the issuer, with why. */
  demoted?(group: number, reason: string): void;
}
