import { LeafError, LeafErrorCode } from './leaf.error';

/**
 * The clock reads earlier than the last millisecond this generator issued an ID in, so
 * issuing now could repeat an ID. Nothing was issued.
 *
 * `leafCode` follows Leaf: `-1` when a small step back was waited out and the clock was
 * still behind, `-3` when the step back was larger than the tolerance (no wait was tried).
 * Retrying after `retryAfterMs` succeeds once the clock has caught up.
 */
export class ClockMovedBackwardsError extends LeafError {
  readonly code = LeafErrorCode.CLOCK_MOVED_BACKWARDS;
  override readonly leafCode: -1 | -3;
  override readonly retryAfterMs: number;

  constructor(
    /** How far the clock is behind the last issued timestamp, in ms. */
    readonly offsetMs: number,
    /** The last millisecond an ID was issued in (or the lease floor of this run). */
    readonly lastTimestamp: number,
    /** The clock reading that was behind. */
    readonly now: number,
    /** True when a wait of twice the offset was tried first. */
    readonly waited: boolean,
  ) {
    super(
      waited
        ? `Clock moved backwards: still ${offsetMs} ms behind the last issued timestamp ${lastTimestamp} after waiting; refusing to issue IDs until it catches up`
        : `Clock moved backwards by ${offsetMs} ms (more than the tolerance); refusing to issue IDs until it passes ${lastTimestamp}`,
    );
    this.leafCode = waited ? -1 : -3;
    this.retryAfterMs = offsetMs + 1;
  }
}
