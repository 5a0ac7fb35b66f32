/** Options of `LeafMetricsCollector.register`. */
export interface LeafMetricsOptions {
  /**
   * Buckets (seconds) of `leaf_segment_load_duration_seconds`.
   * @default [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5]
   */
  readonly loadBuckets?: number[];
  /**
   * Buckets (seconds) of `leaf_snowflake_lease_extension_duration_seconds`.
   * @default [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5]
   */
  readonly leaseBuckets?: number[];
  /**
   * Buckets (seconds) of `leaf_gapless_reservation_age_seconds`.
   * @default [0.01, 0.1, 0.5, 1, 5, 15, 60, 300, 900, 3600, 86400]
   */
  readonly gaplessAgeBuckets?: number[];
  /**
   * Tags with series of their own (`tag` label); every later tag is counted in one
   * `tag="_other"` series per metric, so the exposition stays bounded whatever the table
   * holds. A key nobody created (`TagNotFoundError`) never gets a series.
   * @default 500
   */
  readonly maxTagSeries?: number;
}

/** {@link LeafMetricsOptions.maxTagSeries}'s default. */
export const DEFAULT_MAX_TAG_SERIES = 500;

/** Default buckets (seconds) of Leaf's histograms. */
export const DEFAULT_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

/** Default buckets (seconds) of the age of gapless reservations when they are settled. */
export const GAPLESS_AGE_BUCKETS = [0.01, 0.1, 0.5, 1, 5, 15, 60, 300, 900, 3600, 86400];
