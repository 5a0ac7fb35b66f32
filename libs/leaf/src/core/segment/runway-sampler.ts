import type { SegmentBuffer } from './segment-buffer';

/** One tag's runway: how long the IDs in memory last at its recent issue rate. */
export interface TagRunway {
  readonly tag: string;
  /** IDs in memory not handed out yet (current + next segment). */
  readonly idle: number;
  /** Recent issue rate, IDs per second (0 for a tag nobody asks for). */
  readonly ratePerSecond: number;
  /** `idle / rate` in ms; `null` when the rate is 0 (the IDs last indefinitely). */
  readonly runwayMs: number | null;
  /** Loads failed in a row. */
  readonly failures: number;
}

/** Time constant of the issue-rate average. */
const RATE_TAU_MS = 10_000;
/** Samples closer together than this are skipped (a probe storm costs nothing). */
const MIN_SAMPLE_INTERVAL_MS = 200;

interface RateSample {
  at: number;
  issued: number;
  /** Exponentially weighted average, IDs/s. */
  average: number;
  /** Rate over the last sample interval, IDs/s. */
  last: number;
}

/**
 * The issue rate of each tag, estimated off the hot path from the buffers' issued-ID
 * counters, and the runway it leaves the IDs in memory.
 */
export class RunwaySampler {
  /** Issue-rate samples per tag. */
  private readonly rates = new Map<string, RateSample>();

  /**
   * Samples every buffer's issued-ID counter and updates its rate estimate. Cheap (one
   * subtraction per tag) and off the hot path: called by a periodic job and by readiness.
   */
  sample(buffers: Iterable<SegmentBuffer>, now: number): void {
    for (const buffer of buffers) {
      const tag = buffer.tag;
      const issued = buffer.issued;
      const sample = this.rates.get(tag);
      if (!sample) {
        this.rates.set(tag, { at: now, issued, average: 0, last: 0 });
        continue;
      }
      const elapsed = now - sample.at;
      if (elapsed < MIN_SAMPLE_INTERVAL_MS) continue;
      const last = (Math.max(0, issued - sample.issued) * 1000) / elapsed;
      const weight = 1 - Math.exp(-elapsed / RATE_TAU_MS);
      sample.average += weight * (last - sample.average);
      sample.last = last;
      sample.at = now;
      sample.issued = issued;
    }
  }

  /**
   * Each tag's runway: IDs in memory ÷ recent issue rate (the larger of the average and the
   * last interval's rate, so a surge shortens it at once).
   */
  runways(buffers: Iterable<SegmentBuffer>, now: number): TagRunway[] {
    const all = [...buffers];
    this.sample(all, now);
    return all.map((buffer) => {
      const sample = this.rates.get(buffer.tag);
      const rate = sample ? Math.max(sample.average, sample.last) : 0;
      const idle = buffer.idle;
      return {
        tag: buffer.tag,
        idle,
        ratePerSecond: Math.round(rate * 100) / 100,
        runwayMs: rate > 0 ? Math.round((idle / rate) * 1000) : null,
        failures: buffer.failureStreak,
      };
    });
  }

  /** Forgets a deleted tag's samples. */
  forget(tag: string): void {
    this.rates.delete(tag);
  }
}
