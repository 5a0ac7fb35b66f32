import { LeafError, LeafErrorCode } from './leaf.error';

/**
 * At start: another region holds a live lease on the data-centre ID this region asked the
 * region registry for (docs/operations.md, "Regions"). Two regions issuing with one
 * data-centre ID would repeat each other's IDs, so this one refuses to start.
 */
export class DataCenterHeldError extends LeafError {
  readonly code = LeafErrorCode.DATA_CENTER_HELD;

  constructor(
    readonly dataCenterId: number,
    /** The region that asked. */
    readonly region: string,
    /** The region holding the lease. */
    readonly holder: string,
    /** When the holder's lease ends unless renewed, ms since the Unix epoch (registry clock). */
    readonly expiresAt: number,
  ) {
    super(
      `Data-centre ID ${dataCenterId} is leased to region "${holder}" until ${new Date(expiresAt).toISOString()} (unless renewed); region "${region}" may not use it. ` +
        'Fix: give this region its own LEAF_REGION_DATA_CENTER_ID, or stop every instance of the other region and start this one after its lease ended.',
    );
  }
}

/**
 * At start: the region registry did not answer a claim within `startupMaxWaitMs`, so this
 * instance cannot prove its region holds its data-centre ID (running instances keep serving
 * through such an outage until their last renewal's horizon).
 */
export class RegionLeaseUnavailableError extends LeafError {
  readonly code = LeafErrorCode.REGION_LEASE_UNAVAILABLE;
  override readonly retryAfterMs = 1000;
}
