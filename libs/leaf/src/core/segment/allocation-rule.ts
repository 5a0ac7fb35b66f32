import { AllocationError, IdOverflowError } from '../errors/allocation.error';
import { MAX_INT64 } from './leaf-alloc-store.port';

/**
 * The one allocation rule every {@link LeafAllocStore} applies while it holds the row:
 * the step must be a positive safe integer, and the new `max_id` must not pass 2^63-1.
 * Stores call it between reading the locked row and writing it, so a refusal writes nothing.
 * @returns the new `max_id`: the row's `maxId` plus `step` (the caller's, or the row's column).
 * @throws {AllocationError} when `step` is not a positive (safe) integer, e.g. a row whose
 *   `step` column is 0 or negative.
 * @throws {IdOverflowError} when `maxId + step` would pass 2^63-1.
 */
export function advanceMaxId(tag: string, maxId: bigint, step: number): bigint {
  if (!Number.isSafeInteger(step) || step <= 0) {
    throw new AllocationError(
      tag,
      `Tag "${tag}" cannot advance by the step ${step}: a step must be a positive integer`,
    );
  }
  const next = maxId + BigInt(step);
  if (next > MAX_INT64) throw new IdOverflowError(tag, maxId, step);
  return next;
}

/**
 * The rule of a hand-back ({@link LeafAllocStore.handBack}): `max_id` may only be lowered,
 * from exactly the value the caller's allocation read back, to a non-negative value.
 * @returns false when there is nothing to hand back (`newMaxId === expectedMaxId`).
 * @throws {AllocationError} when `newMaxId > expectedMaxId` (it would raise `max_id`) or
 *   `newMaxId < 0`.
 */
export function checkHandBack(tag: string, expectedMaxId: bigint, newMaxId: bigint): boolean {
  if (typeof expectedMaxId !== 'bigint' || typeof newMaxId !== 'bigint' || newMaxId < 0n) {
    throw new AllocationError(tag, `Tag "${tag}": cannot hand back to max_id ${String(newMaxId)}`);
  }
  if (newMaxId > expectedMaxId) {
    throw new AllocationError(
      tag,
      `Tag "${tag}": a hand-back never raises max_id (${expectedMaxId} to ${newMaxId})`,
    );
  }
  return newMaxId < expectedMaxId;
}
