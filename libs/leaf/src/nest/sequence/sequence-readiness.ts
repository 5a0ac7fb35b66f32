import type { IssuerReachability } from './issuer-reachability';
import type { IssuerGroup } from '../../core/sequence/issuer-election.port';

/** Sequence mode's readiness, as `SequenceService.readiness` reports it. */
export interface SequenceReadiness {
  readonly ready: boolean;
  /** Why not ready (absent when ready). */
  readonly reason?: string;
  /** Where the issuers are elected, the election's `kind` (absent before start). */
  readonly coordination?: string;
  /** Groups with no issuer that can issue now. */
  readonly groupsWithoutIssuer: number[];
  /** Issuers this instance forwards to that do not answer. */
  readonly unreachableIssuers: string[];
  /** The advertised address answered as this instance. */
  readonly advertiseChecked: boolean;
}

/** What {@link sequenceReadiness} looks at. */
export interface SequenceReadinessInput {
  /** The election's source and whether it is reached; `null` before start. */
  readonly coordination: { kind: string; source: string; connected: boolean } | null;
  readonly groups: readonly IssuerGroup[];
  readonly issuers: IssuerReachability;
  /** The transport can probe: each issuer must then have said it issues the group. */
  readonly probes: boolean;
  readonly advertiseChecked: boolean;
}

/**
 * Readiness: true exactly while this instance can serve every group's keys now, as issuer or
 * by forwarding. Down while the election's source (ZooKeeper, or the database) is not reached, while a group has no issuer that can
 * issue (a handover, a new issuer's start), and while a group's issuer does not answer this
 * instance's forwarded calls (until a probe or a batch gets through again).
 */
export function sequenceReadiness(input: SequenceReadinessInput): SequenceReadiness {
  const snapshots = input.groups.map((group) => group.snapshot());
  const groupsWithoutIssuer = snapshots
    .filter((g) => g.issuer === null || g.startsInMs !== null)
    .map((g) => g.group);
  const details = {
    ...(input.coordination ? { coordination: input.coordination.kind } : {}),
    groupsWithoutIssuer,
    unreachableIssuers: input.issuers.unreachableIssuers(),
    advertiseChecked: input.advertiseChecked,
  };
  const down = (reason: string) => ({ ready: false, reason, ...details });
  if (input.coordination === null) return down('not started');
  if (!input.coordination.connected) return down(`${input.coordination.source} is not connected`);
  for (const g of snapshots) {
    if (g.state === 'issuer') {
      if (g.startsInMs !== null) {
        return down(
          `group ${g.group}: this instance was elected and starts issuing in ${g.startsInMs} ms`,
        );
      }
      if (!input.groups[g.group]!.issuing)
        return down(`group ${g.group}: this instance's lease is not in force`);
    } else if (g.issuer === null) {
      return down(`group ${g.group} has no issuer`);
    } else if (input.issuers.isUnreachable(g.issuer)) {
      return down(`group ${g.group}: the issuer at ${g.issuer} does not answer`);
    } else if (input.probes && !input.issuers.serves(g.issuer, g.group)) {
      return down(`group ${g.group}: the issuer at ${g.issuer} does not issue it yet`);
    }
  }
  return { ready: true, ...details };
}
