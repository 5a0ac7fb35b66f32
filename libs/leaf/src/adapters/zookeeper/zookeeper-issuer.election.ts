import type {
  IssuerCampaign,
  IssuerElection,
  IssuerGroup,
} from '../../core/sequence/issuer-election.port';
import { SequenceGroup } from '../../core/sequence/sequence-group';
import type { ZkClient } from '../../core/zookeeper/zk-client.port';

/**
 * {@link IssuerElection} on ZooKeeper (docs/design.md, "Sequence mode"): each group a
 * {@link SequenceGroup} under `/sequence/{name}/groups/{group}`, on a client of its own.
 */
export class ZookeeperIssuerElection implements IssuerElection {
  readonly kind = 'zookeeper';
  readonly source = 'ZooKeeper';

  constructor(readonly zk: ZkClient) {}

  describe(): string {
    return 'through ZooKeeper';
  }

  /** @throws {ZkError} when not connected within `waitMs` */
  open(waitMs: number): Promise<void> {
    return this.zk.connect(waitMs);
  }

  campaign(group: number, c: IssuerCampaign): IssuerGroup {
    const root = `/sequence/${c.name}/groups/${group}`;
    const { leaseMs } = c;
    return new SequenceGroup(
      this.zk,
      { ...c, group, root, sessionTimeoutMs: leaseMs, freshSessionWaitMs: leaseMs },
      c,
    );
  }

  close(): Promise<void> {
    return this.zk.close();
  }
}
