import type { AllocatedRange } from '../core/segment/leaf-alloc-store.port';
import type { SegmentCacheOptions } from '../core/segment/segment-cache';

/** `[maxId - appliedStep, maxId)` of an allocation. */
export function rangeOf(allocation: AllocatedRange): { start: bigint; end: bigint } {
  return { start: allocation.maxId - BigInt(allocation.appliedStep), end: allocation.maxId };
}

/** The rejection of `promise` (fails the test when it resolves). */
export async function rejectionOf(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected a rejection, got a result');
}

/** `SegmentCache` settings for unit tests: the library's defaults, small and fast; `overrides` win. */
export function segmentCacheTestOptions(
  overrides: Partial<SegmentCacheOptions> = {},
): SegmentCacheOptions {
  return {
    preloadThreshold: 0.9,
    loadTimeoutMs: 1000,
    stepDurationMs: 900_000,
    maxStep: 1_000_000,
    retryBackoffMs: 1000,
    maxConcurrentLoads: 2,
    maxBatchSize: 1000,
    ...overrides,
  };
}
