import { TypeormSequenceIssuerStore } from '../../adapters/typeorm/typeorm-sequence-issuer.store';
import type { Clock } from '../../core/clock';
import { LeafConfigurationError } from '../../core/errors/leaf-configuration.error';
import { DatabaseSequenceGroup } from '../../core/sequence/database-sequence-group';
import type { FencedRangeLoader } from '../../core/sequence/issuing-term';
import type { SequenceIssuerStore } from '../../core/sequence/sequence-issuer-store.port';
import { SequenceGroup } from '../../core/sequence/sequence-group';
import type {
  SequenceBalance,
  SequenceGroupListener,
} from '../../core/sequence/sequence-group.options';
import type { ZkClient } from '../../core/zookeeper/zk-client.port';
import type { SegmentBufferOptions } from '../../core/segment/segment-buffer';
import type { ResolvedSegmentOptions } from '../leaf-options.interface';
import type { ZkClientFactory } from '../snowflake/zk-client.factory';
import type { ResolvedSequenceOptions } from '../sequence-options.interface';

/** One issuer group, whichever election it stands in. */
export type IssuerGroup = SequenceGroup | DatabaseSequenceGroup;

/** Where the groups are elected: ZooKeeper's client, or the database's issuer rows. */
export type GroupElection =
  | { readonly kind: 'zookeeper'; readonly zk: ZkClient }
  | { readonly kind: 'database'; readonly store: SequenceIssuerStore };

/**
 * The election `options.coordination` names: a ZooKeeper client (not connected yet), or the
 * issuer rows in segment mode's `dataSource`.
 * @throws {LeafConfigurationError} for the database without a MySQL/MariaDB or PostgreSQL
 *   `dataSource` (the resolver reports it first).
 */
export function groupElection(
  options: ResolvedSequenceOptions,
  segment: ResolvedSegmentOptions | null,
  zkClientFactory: ZkClientFactory,
): GroupElection {
  if (options.coordination === 'zookeeper') {
    return {
      kind: 'zookeeper',
      zk: zkClientFactory({ connect: options.connect, sessionTimeoutMs: options.sessionTimeoutMs }),
    };
  }
  const allocation = segment?.allocation;
  if (allocation?.kind !== 'dataSource') {
    throw new LeafConfigurationError([
      "sequence.coordination 'database' needs segment mode's `dataSource`",
    ]);
  }
  return { kind: 'database', store: new TypeormSequenceIssuerStore(allocation.dataSource) };
}

/** What every group of an instance shares. */
export interface SequenceGroupsSetup {
  readonly name: string;
  readonly run: string;
  readonly options: ResolvedSequenceOptions;
  readonly buffer: SegmentBufferOptions;
  readonly loader: FencedRangeLoader;
  readonly balance: SequenceBalance;
  /** How many groups this instance issues now (the database election's claim delay). */
  readonly issuing: () => number;
  readonly eligible: () => boolean;
  readonly clock: Clock;
  readonly monotonic: () => number;
  readonly listener: SequenceGroupListener;
}

/**
 * The `options.groups` issuer groups of an instance in `election` (docs/design.md, "Sequence
 * mode"; "Sequence mode on the database").
 */
export function createSequenceGroups(
  election: GroupElection,
  setup: SequenceGroupsSetup,
): IssuerGroup[] {
  const { options, run } = setup;
  const groups: IssuerGroup[] = [];
  for (let group = 0; group < options.groups; group++) {
    const common = {
      group,
      address: options.advertise,
      run,
      leaseMarginMs: options.leaseMarginMs,
      buffer: setup.buffer,
      resignAfterFailingMs: options.handOverAfterMs,
      eligible: setup.eligible,
    };
    groups.push(
      election.kind === 'zookeeper'
        ? new SequenceGroup(
            election.zk,
            setup.loader,
            {
              ...common,
              root: `/sequence/${setup.name}/groups/${group}`,
              sessionTimeoutMs: options.sessionTimeoutMs,
              freshSessionWaitMs: options.sessionTimeoutMs,
              balance: setup.balance,
            },
            setup.clock,
            setup.monotonic,
            setup.listener,
          )
        : new DatabaseSequenceGroup(
            election.store,
            setup.loader,
            {
              ...common,
              name: setup.name,
              leaseMs: options.sessionTimeoutMs,
              // Fair shares: a free group goes first to the instances that issue fewer.
              claimDelayMs: () => setup.issuing() * options.heartbeatIntervalMs,
            },
            setup.clock,
            setup.monotonic,
            setup.listener,
          ),
    );
  }
  return groups;
}

/** The election's source as readiness and refusals name it, and whether this instance reaches it. */
export interface CoordinationStatus {
  readonly kind: 'zookeeper' | 'database';
  readonly source: 'ZooKeeper' | 'the database';
  readonly connected: boolean;
}

/**
 * {@link CoordinationStatus} of `election` (the database: reached when every group's last round
 * reached it); null before start and after shutdown.
 */
export function coordinationStatus(
  election: GroupElection | null,
  groups: readonly IssuerGroup[],
): CoordinationStatus | null {
  if (election === null) return null;
  if (election.kind === 'zookeeper') {
    return { kind: 'zookeeper', source: 'ZooKeeper', connected: election.zk.connected };
  }
  return {
    kind: 'database',
    source: 'the database',
    connected: groups.every(
      (group) => !(group instanceof DatabaseSequenceGroup) || group.reachable,
    ),
  };
}
