import type { Clock } from '../clock';
import type { SegmentBufferOptions } from '../segment/segment-buffer';
import type { SequenceBalance } from './group-balance';
import type { IssuingGroup } from './issuing-group';
import type { FencedRangeLoader } from './issuing-term';
import type { SequenceGroupListener } from './sequence-group.options';

/**
 * One group's candidacy in an {@link IssuerElection}, and while elected its issuing: what
 * sequence mode asks of a group, whichever election holds it.
 */
export type IssuerGroup = IssuingGroup;

/** What every group of an instance is made with ({@link IssuerElection.campaign}). */
export interface IssuerCampaign {
  /** The service name: the election's namespace. */
  readonly name: string;
  /** This process (unique per run). */
  readonly run: string;
  /** Where other instances forward a group's calls while this one issues. */
  readonly address: string;
  /** How long a won election holds without renewal (a session timeout, a row's lease). */
  readonly leaseMs: number;
  readonly leaseMarginMs: number;
  readonly heartbeatIntervalMs: number;
  readonly resignAfterFailingMs: number;
  readonly buffer: SegmentBufferOptions;
  readonly loader: FencedRangeLoader;
  readonly balance: SequenceBalance;
  /** How many groups this instance issues now (fair shares). */
  readonly issuing: () => number;
  /** False while this instance must not stand for election (its address is not checked yet). */
  readonly eligible: () => boolean;
  readonly clock: Clock;
  readonly monotonic: () => number;
  readonly listener: SequenceGroupListener | null;
}

/**
 * Port: where sequence mode elects one issuer per group (docs/design.md, "Coordination
 * ports"). Adapters: ZooKeeper (`adapters/zookeeper`), the `leaf_sequence_issuer` rows
 * (`adapters/typeorm`), in memory (`testing/`).
 */
export interface IssuerElection {
  /** What holds the election (`zookeeper`, `database`), for readiness and records only. */
  readonly kind: string;
  /** How refusals and readiness name it (`ZooKeeper`, `the database`). */
  readonly source: string;
  /** Where the issuers are elected, in words, for the start-up log (`through ZooKeeper`). */
  describe(): string;
  /** Opens its connection. @throws when not reached within `waitMs` (the rounds keep trying). */
  open(waitMs: number): Promise<void>;
  /** Stands this instance for election in `group`. */
  campaign(group: number, campaign: IssuerCampaign): IssuerGroup;
  /** Closes what {@link open} opened. */
  close(): Promise<void>;
}
