import { DatabaseSequenceGroup } from './database-sequence-group';
import type { IssuerCampaign, IssuerElection, IssuerGroup } from './issuer-election.port';
import type { SequenceIssuerStore } from './sequence-issuer-store.port';

/**
 * {@link IssuerElection} on issuer rows ({@link SequenceIssuerStore}, docs/design.md,
 * "Sequence mode on the database"): each group a {@link DatabaseSequenceGroup}.
 */
export class RowIssuerElection implements IssuerElection {
  constructor(
    readonly store: SequenceIssuerStore,
    readonly kind = 'database',
    readonly source = 'the database',
    private readonly where = 'in the database (leaf_sequence_issuer)',
  ) {}

  describe(): string {
    return this.where;
  }

  /** The rows' connection is the application's DataSource: nothing to open. */
  async open(): Promise<void> {}

  campaign(group: number, c: IssuerCampaign): IssuerGroup {
    return new DatabaseSequenceGroup(
      this.store,
      // Fair shares: a free group goes first to the instances that issue fewer.
      { ...c, group, claimDelayMs: () => c.issuing() * c.heartbeatIntervalMs },
      c,
    );
  }

  async close(): Promise<void> {}
}
