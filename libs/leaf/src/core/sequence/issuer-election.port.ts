import type { Clock } from '../clock';
import type { SegmentBufferOptions } from '../segment/segment-buffer';
import type { FencedRangeLoader, SequenceGroupSnapshot, SequenceGroupState } from './issuing-term';
import type { SequenceBalance, SequenceGroupListener } from './sequence-group.options';

/**
 * One group's candidacy in an {@link IssuerElection}, and while elected its issuing
 * (`IssuingTerm`): what sequence mode asks of a group, whichever election holds it.
 */
export interface IssuerGroup {
  readonly state: SequenceGroupState;
  /** The term of this instance's issuing (fences its allocations). */
  readonly term: number;
  /** True while this instance is the issuer, past its start, and its lease is in force. */
  readonly issuing: boolean;
  /** Whether the last round reached the election's store. */
  readonly reachable: boolean;
  /** Who issues now, as last watched (null: none known, or this instance). */
  readonly issuerAddress: string | null;
  /** One campaign round: join, renew as issuer, else watch and claim. Never throws. */
  tick(): Promise<void>;
  /**
   * `count` consecutive IDs `[start, end)` of `key`, above every ID the group issued before.
   * @throws {SequenceNoIssuerError} when this instance is not the issuer.
   * @throws {SequenceLeaseExpiredError} when its lease is not in force.
   */
  issue(key: string, count: number): Promise<{ start: bigint; end: bigint }>;
  /** Graceful stop: refuses later calls and lets a successor start at once. Never throws. */
  resign(): Promise<void>;
  snapshot(): SequenceGroupSnapshot;
}

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
  /** False while this instance must not stand for election. */
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
