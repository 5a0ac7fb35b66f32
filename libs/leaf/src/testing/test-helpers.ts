import type { AllocatedRange } from '../core/segment/leaf-alloc-store.port';

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
