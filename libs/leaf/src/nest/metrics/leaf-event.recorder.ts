import { Injectable, Logger } from '@nestjs/common';
import type { LeafMode } from '../../core/id.service';
import type { LeafObserver, RangeLoadDetail } from '../../core/leaf-observer';

/** A clock event more than this long after the previous one starts a new episode (logged again). */
const CLOCK_EPISODE_GAP_MS = 10_000;

/**
 * The module's {@link LeafObserver}: the core reports range loads, lease extensions, not-ready
 * answers and clock steps back here, where they complete (never per ID). Keeps the counters
 * that must exist from the start, logs clock events once per episode, and forwards every
 * event to the subscribed sinks (each {@link LeafMetricsCollector} registration subscribes its
 * histograms). With no sink subscribed an event costs a loop over an empty set.
 */
@Injectable()
export class LeafEventRecorder implements LeafObserver {
  private readonly logger = new Logger('LeafClock');
  private readonly sinks = new Set<LeafObserver>();
  private readonly notReadyCounts = { segment: 0, snowflake: 0, sequence: 0 };
  private readonly clockCounts = { waited: 0, refused: 0 };
  private lastClockEventAt = Number.NEGATIVE_INFINITY;
  private episodeEvents = 0;

  private readonly regressionCounts = {
    detected: { regression: 0, 'unconfirmed-commit': 0, 'range-guard': 0 },
    repaired: 0,
  };

  /** `max_id` regressions since start: detected per cause, and repaired (high-water mark). */
  get regressionTotals(): Readonly<{
    detected: Readonly<Record<'regression' | 'unconfirmed-commit' | 'range-guard', number>>;
    repaired: number;
  }> {
    return this.regressionCounts;
  }

  /** Not-ready answers since start, per mode. */
  get notReadyTotals(): Readonly<{ segment: number; snowflake: number }> {
    return this.notReadyCounts;
  }

  /** Clock steps back since start: waited out, or refused (`LEAF_CLOCK_MOVED_BACKWARDS`). */
  get clockBackwardsTotals(): Readonly<{ waited: number; refused: number }> {
    return this.clockCounts;
  }

  /** Adds `sink`; returns the function that removes it. */
  subscribe(sink: LeafObserver): () => void {
    this.sinks.add(sink);
    return () => this.sinks.delete(sink);
  }

  rangeLoaded(tag: string, durationMs: number, ok: boolean, detail?: RangeLoadDetail): void {
    for (const sink of this.sinks) sink.rangeLoaded?.(tag, durationMs, ok, detail);
  }

  leaseExtended(durationMs: number, outcome: 'ok' | 'degraded' | 'error', error?: unknown): void {
    for (const sink of this.sinks) sink.leaseExtended?.(durationMs, outcome, error);
  }

  issuerElected(group: number, term: number): void {
    for (const sink of this.sinks) sink.issuerElected?.(group, term);
  }

  issuerDemoted(group: number, reason: string): void {
    for (const sink of this.sinks) sink.issuerDemoted?.(group, reason);
  }

  batchForwarded(
    address: string,
    calls: number,
    items: number,
    durationMs: number,
    error: unknown,
  ): void {
    for (const sink of this.sinks) sink.batchForwarded?.(address, calls, items, durationMs, error);
  }

  notReady(mode: LeafMode, tag: string | null): void {
    this.notReadyCounts[mode]++;
    for (const sink of this.sinks) sink.notReady?.(mode, tag);
  }

  maxIdRegression(
    tag: string,
    cause: 'regression' | 'unconfirmed-commit' | 'range-guard',
    repaired: boolean,
  ): void {
    this.regressionCounts.detected[cause]++;
    if (repaired) this.regressionCounts.repaired++;
    for (const sink of this.sinks) sink.maxIdRegression?.(tag, cause, repaired);
  }

  gaplessSettled(
    series: string,
    state: 'confirmed' | 'voided',
    reason: string | null,
    ageMs: number,
  ): void {
    for (const sink of this.sinks) sink.gaplessSettled?.(series, state, reason, ageMs);
  }

  clockBackwards(offsetMs: number, outcome: 'waited' | 'refused'): void {
    this.clockCounts[outcome]++;
    const now = Date.now();
    const newEpisode = now - this.lastClockEventAt > CLOCK_EPISODE_GAP_MS;
    this.lastClockEventAt = now;
    if (newEpisode) {
      if (this.episodeEvents > 1) {
        this.logger.log(`The previous clock episode had ${this.episodeEvents} step(s) back`);
      }
      this.episodeEvents = 0;
      const what =
        outcome === 'waited'
          ? 'waited out (within the tolerance, clockBackwardsToleranceMs); IDs keep coming'
          : 'beyond the tolerance: snowflake requests answer 503 LEAF_CLOCK_MOVED_BACKWARDS until the clock passes the last issued millisecond';
      this.logger.warn(
        `The system clock moved back ${offsetMs} ms behind the last issued ID's millisecond, ${what}. ` +
          'Check time synchronisation: NTP/chrony must slew the clock, never step it back (docs/operations.md, "Clocks"). ' +
          `Logged once per episode; leaf_clock_backwards_total counts every step.`,
      );
    }
    this.episodeEvents++;
    for (const sink of this.sinks) sink.clockBackwards?.(offsetMs, outcome);
  }
}
