/**
 * Port: the region registry, a store every region can reach (rarely) that leases data-centre
 * IDs to regions (docs/design.md, "Regions"). One row per namespace and data-centre ID; the
 * lease belongs to a region, shared by all of its instances: any of them claims or renews it.
 * The TypeORM adapter keeps it in `leaf_region_lease` (MySQL/MariaDB, PostgreSQL). Times are
 * milliseconds: `expiresAt` on the registry's clock, `horizon` and `floor` on the holders'.
 */
export interface RegionRegistry {
  /** Where the registry lives, for logs and errors (`PostgreSQL leaf_region_lease`). */
  readonly description: string;
  /**
   * In one step, with the row locked: applies {@link regionClaimStep} to the row and the
   * registry's now, and writes the outcome, with `horizon = max(horizon, request.horizon)`.
   * @returns the claim, or `held` (another region's live lease, untouched).
   * @throws the driver's error (nothing was claimed, or a claim whose answer was lost).
   */
  claim(request: RegionClaimRequest): Promise<RegionClaimResult>;
  /**
   * `expiresAt = max(expiresAt, now + leaseMs)` and `horizon = max(horizon, horizon given)`,
   * only while the row still names `lease`'s region and epoch.
   * @returns false when it does not (another region took the data-centre ID).
   * @throws the driver's error (the update may or may not have been applied).
   */
  renew(lease: HeldRegionLease, leaseMs: number, horizon: number): Promise<boolean>;
  /** The row of `dataCenterId` in namespace `name`, `null` if it was never claimed. */
  holder(name: string, dataCenterId: number): Promise<RegionLeaseRow | null>;
}

/** One row of the registry. */
export interface RegionLeaseRow {
  readonly dataCenterId: number;
  /** The region that holds (or last held) the data-centre ID. */
  readonly region: string;
  /** Fencing counter: +1 each time another region takes the data-centre ID. */
  readonly epoch: bigint;
  /** End of the lease, on the registry's clock. */
  readonly expiresAt: number;
  /** The last millisecond any instance of the region may issue IDs in, recorded before use. */
  readonly horizon: number;
  /** The previous region's horizon when this region took the ID: its IDs all come after it. */
  readonly floor: number;
}

/** What {@link RegionRegistry.claim} needs. */
export interface RegionClaimRequest {
  /** The module's `name` (the namespace). */
  readonly name: string;
  readonly dataCenterId: number;
  readonly region: string;
  readonly leaseMs: number;
  /** The horizon this claim proves (`sent + leaseMs − marginMs`), recorded before use. */
  readonly horizon: number;
}

/** The lease a region holds: what renewals are conditional on. */
export interface HeldRegionLease {
  readonly name: string;
  readonly dataCenterId: number;
  readonly region: string;
  readonly epoch: bigint;
}

/** What a claim won. */
export interface RegionClaim extends HeldRegionLease {
  /** IDs of this region are issued only in milliseconds after this one (the previous region's horizon). */
  readonly floor: number;
  /** `taken`: from another region (or new); `joined`: the region held it already. */
  readonly how: 'new' | 'joined' | 'taken';
}

/** Outcome of {@link RegionRegistry.claim}. */
export type RegionClaimResult =
  { readonly claimed: RegionClaim } | { readonly held: RegionLeaseRow };

/** What {@link chooseRegionClaim} decided. */
export type RegionClaimChoice =
  | { readonly kind: 'insert' }
  | { readonly kind: 'join'; readonly row: RegionLeaseRow }
  | { readonly kind: 'take'; readonly row: RegionLeaseRow }
  | { readonly kind: 'held'; readonly row: RegionLeaseRow };

/**
 * The claim rule (docs/design.md, "Regions"), given the row (or none) and the registry's now:
 * no row → insert (epoch 1); the region's own row, live or not → join it (same epoch, its
 * expiry extended); another region's expired row → take it (epoch + 1, floor = its horizon);
 * another region's live row → held, refused.
 */
export function chooseRegionClaim(
  row: RegionLeaseRow | null,
  region: string,
  registryNow: number,
): RegionClaimChoice {
  if (row === null) return { kind: 'insert' };
  if (row.region === region) return { kind: 'join', row };
  if (row.expiresAt < registryNow) return { kind: 'take', row };
  return { kind: 'held', row };
}

/** The row a claim writes for `choice` (not `held`). */
export function claimedRow(
  choice: Exclude<RegionClaimChoice, { kind: 'held' }>,
  request: RegionClaimRequest,
  registryNow: number,
): RegionLeaseRow {
  const expiresAt = registryNow + request.leaseMs;
  if (choice.kind === 'insert') {
    return {
      dataCenterId: request.dataCenterId,
      region: request.region,
      epoch: 1n,
      expiresAt,
      horizon: request.horizon,
      floor: 0,
    };
  }
  const { row } = choice;
  if (choice.kind === 'join') {
    return {
      ...row,
      expiresAt: Math.max(row.expiresAt, expiresAt),
      horizon: Math.max(row.horizon, request.horizon),
    };
  }
  return {
    dataCenterId: row.dataCenterId,
    region: request.region,
    epoch: row.epoch + 1n,
    expiresAt,
    horizon: Math.max(row.horizon, request.horizon),
    floor: row.horizon,
  };
}

/** What a claim does with the row locked ({@link regionClaimStep}). */
export type RegionClaimStep =
  | { readonly held: RegionLeaseRow }
  | { readonly claimed: RegionClaim; readonly row: RegionLeaseRow; readonly insert: boolean };

/**
 * A claim, with the row locked: {@link chooseRegionClaim} on the row (`null`: none) at the
 * registry's now; unless `held`, the {@link claimedRow} to write (`insert`: a new one) and
 * the claim it answers.
 */
export function regionClaimStep(
  current: RegionLeaseRow | null,
  request: RegionClaimRequest,
  registryNow: number,
): RegionClaimStep {
  const choice = chooseRegionClaim(current, request.region, registryNow);
  if (choice.kind === 'held') return { held: choice.row };
  const row = claimedRow(choice, request, registryNow);
  const how = choice.kind === 'insert' ? 'new' : choice.kind === 'join' ? 'joined' : 'taken';
  const { name, dataCenterId, region } = request;
  const claimed = { name, dataCenterId, region, epoch: row.epoch, floor: row.floor, how } as const;
  return { claimed, row, insert: choice.kind === 'insert' };
}
