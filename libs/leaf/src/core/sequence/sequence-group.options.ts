import type { IssuerCampaign } from './issuer-election.port';
import type { IssuingTermOptions } from './issuing-term';

/**
 * Settings of one `SequenceGroup`; `run` names this process's election nodes; without
 * `balance`, no balancing.
 */
export interface SequenceGroupOptions
  extends
    IssuingTermOptions,
    Pick<IssuerCampaign, 'address' | 'run'>,
    Partial<Pick<IssuerCampaign, 'balance' | 'eligible'>> {
  /** The group's election directory, e.g. `/sequence/leaf/groups/0`. */
  readonly root: string;
  /** The requested ZooKeeper session timeout (the granted one is used when smaller). */
  readonly sessionTimeoutMs: number;
  /**
   * How old the ZooKeeper session must be before a term elected in it issues (the session
   * timeout; docs/design.md, "A ZooKeeper that forgot"). Only unit tests of other rules set 0.
   */
  readonly freshSessionWaitMs: number;
}

/** Told of a group's changes (metrics, logs); never on the hot path. */
export interface SequenceGroupListener {
  /** This instance became the issuer (a new term). */
  elected?(group: number, term: number): void;
  /** This instance stopped being the issuer, with why. */
  demoted?(group: number, reason: string): void;
}
