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
   * registry's now, and writes the outcome.
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

/**
 * What a claim does with the row locked ({@link regionClaimStep}): refuse it (another region's
 * live lease), or write `row` (`insert`: a new one) and answer `claimed`.
 */
export type RegionClaimStep =
  | { readonly held: RegionLeaseRow }
  | { readonly claimed: RegionClaim; readonly row: RegionLeaseRow; readonly insert: boolean };

/**
 * The claim rule (docs/design.md, "Regions"), given the row (`null`: none) and the registry's
 * now: no row → insert one (epoch 1, floor 0); the region's own row, live or not → join it
 * (same epoch; expiry and horizon only grow); another region's expired row (strictly) → take
 * it (epoch + 1, floor = its horizon); another region's live row → held, refused. The row
 * written lives `leaseMs` past now, with `horizon = max(horizon, request.horizon)`.
 */
export function regionClaimStep(
  current: RegionLeaseRow | null,
  request: RegionClaimRequest,
  registryNow: number,
): RegionClaimStep {
  const { name, dataCenterId, region } = request;
  const expiresAt = registryNow + request.leaseMs;
  let row: RegionLeaseRow = {
    dataCenterId,
    region,
    epoch: 1n,
    expiresAt,
    horizon: request.horizon,
    floor: 0,
  };
  if (current !== null) {
    if (current.region !== region && current.expiresAt >= registryNow) return { held: current };
    const horizon = Math.max(current.horizon, request.horizon);
    row =
      current.region === region
        ? { ...current, expiresAt: Math.max(current.expiresAt, expiresAt), horizon }
        : {
            ...current,
            region,
            epoch: current.epoch + 1n,
            expiresAt,
            horizon,
            floor: current.horizon,
          };
  }
  const how = current === null ? 'new' : current.region === region ? 'joined' : 'taken';
  const claimed = { name, dataCenterId, region, epoch: row.epoch, floor: row.floor, how } as const;
  return { claimed, row, insert: current === null };
}
