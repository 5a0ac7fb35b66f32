import { LEAF_DEFAULTS } from '../core/leaf-defaults';
import type { AllocatedRange } from '../core/segment/leaf-alloc-store.port';
import type { SegmentBufferOptions } from '../core/segment/segment-buffer';
import type { SegmentCacheOptions } from '../core/segment/segment-cache.options';

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

/** The error `run` throws (fails the test when it returns). */
export function thrownBy(run: () => unknown): Error {
  try {
    run();
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected a throw, got a result');
}

/**
 * `SegmentCache` settings for unit tests: the library's defaults (`LEAF_DEFAULTS`), with a
 * shorter load timeout and fewer concurrent loads; `overrides` win.
 */
export function segmentCacheTestOptions(
  overrides: Partial<SegmentCacheOptions> = {},
): SegmentCacheOptions {
  const segment = LEAF_DEFAULTS.segment;
  return {
    preloadThreshold: segment.preloadThreshold,
    loadTimeoutMs: 1000,
    stepDurationMs: segment.stepDurationMs,
    maxStep: segment.maxStep,
    retryBackoffMs: 1000,
    maxConcurrentLoads: 2,
    maxBatchSize: LEAF_DEFAULTS.maxBatchSize,
    ...overrides,
  };
}

/** The buffer settings of the sequence-mode unit tests (a fixed, large `maxStep`). */
export const sequenceTestBuffer: SegmentBufferOptions = {
  preloadThreshold: 0.9,
  loadTimeoutMs: 1000,
  stepDurationMs: 900_000,
  maxStep: 1_000_000,
  retryBackoffMs: 100,
};

/** mulberry32: a small seeded PRNG (32-bit outputs), so a failure reproduces. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  };
}
