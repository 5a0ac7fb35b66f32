import type { Clock } from '../clock';
import type { IssuerCampaign } from './issuer-election.port';
import {
  IssuingTerm,
  type IssuingTermOptions,
  type SequenceGroupSnapshot,
  type SequenceGroupState,
} from './issuing-term';

/** What a group issues with: an {@link IssuerCampaign}'s range loader, clocks and listener. */
export type IssuingWith = Pick<IssuerCampaign, 'loader' | 'clock' | 'monotonic' | 'listener'>;

/**
 * What both elections of a sequence group share ({@link SequenceGroup} on ZooKeeper,
 * {@link DatabaseSequenceGroup} on a row): the issuing ({@link IssuingTerm}), one round at a
 * time, the graceful stop and the monitoring view. A subclass supplies the election: its
 * round, its reach, its release and who it last saw issue.
 */
export abstract class IssuingGroup {
  /** The issuing half: state, term, lease, buffers. */
  protected readonly issuer: IssuingTerm;
  /** The round in flight: a round asked for meanwhile gets its promise; a resignation waits for it. */
  private running: Promise<void> | null = null;
  protected readonly clock: Clock;
  protected readonly monotonic: () => number;

  protected constructor(
    protected readonly options: IssuingTermOptions & { readonly address: string },
    { loader, clock, monotonic, listener }: IssuingWith,
  ) {
    this.clock = clock;
    this.monotonic = monotonic;
    this.issuer = new IssuingTerm(loader, options, clock, monotonic, listener);
  }

  get state(): SequenceGroupState {
    return this.issuer.state;
  }

  /** The term of this instance's issuing (fences its allocations). */
  get term(): number {
    return this.issuer.term;
  }

  /** True while this instance is the issuer, past its start, and its lease is in force. */
  get issuing(): boolean {
    return this.issuer.issuing;
  }

  /** Whether the last round reached the election's store. */
  abstract get reachable(): boolean;

  /**
   * The address to forward to: the issuer as last seen, or null (none known, or this
   * instance). A stopped group keeps looking, so calls that arrive while the instance shuts
   * down reach the successor.
   */
  get issuerAddress(): string | null {
    return this.state === 'candidate' || this.state === 'stopped' ? this.leaderSeen() : null;
  }

  /** One round of the election. Never throws; at most one round runs at a time. */
  tick(): Promise<void> {
    this.running ??= this.round().finally(() => {
      this.running = null;
    });
    return this.running;
  }

  /** See {@link IssuingTerm.issue}. */
  issue(key: string, count: number): Promise<{ start: bigint; end: bigint }> {
    return this.issuer.issue(key, count);
  }

  /**
   * Graceful stop: refuses every later call at once, then releases the election (once the
   * round in flight ended) so that a successor starts without waiting. Later rounds only look
   * for the successor ({@link issuerAddress}). Never throws.
   */
  async resign(): Promise<void> {
    if (this.state === 'stopped') return;
    const wasIssuer = this.issuer.beginResign();
    await this.running?.catch(() => undefined);
    await this.release(wasIssuer);
    this.issuer.state = 'stopped';
  }

  /** Monitoring view. */
  snapshot(): SequenceGroupSnapshot {
    const issuing = this.state === 'issuer';
    return {
      group: this.options.group,
      state: this.state,
      term: this.issuer.term,
      issuer: issuing ? this.options.address : this.leaderSeen(),
      leaseRemainingMs: issuing ? this.issuer.leaseRemainingMs() : null,
      keys: this.issuer.keys,
      startsInMs: issuing ? this.issuer.startsInMs() : null,
      candidates: this.candidates(),
      elections: this.issuer.elections,
    };
  }

  /** The issuer's address as last seen (null: none known, or this instance). */
  protected abstract leaderSeen(): string | null;

  /** How many instances stand in the election, where the election knows (else 0). */
  protected candidates(): number {
    return 0;
  }

  /** One round of the election; never throws. */
  protected abstract round(): Promise<void>;

  /** Gives the election up on a graceful stop (`wasIssuer`: this instance issued); never throws. */
  protected abstract release(wasIssuer: boolean): Promise<void>;
}
