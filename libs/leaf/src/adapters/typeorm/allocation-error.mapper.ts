import { AllocationError, AllocationLockTimeoutError } from '../../core/errors/allocation.error';
import { LeafError } from '../../core/errors/leaf.error';

/**
 * Turns whatever an allocation threw into a typed error. Typed errors pass through; lock
 * failures become {@link AllocationLockTimeoutError}; anything else, including a commit whose
 * answer was lost, becomes {@link AllocationError} and its range is abandoned.
 */
export function toAllocationError(
  tag: string,
  error: unknown,
  isLockError: (error: unknown) => boolean,
): LeafError {
  if (error instanceof LeafError) return error;
  if (isLockError(error)) return new AllocationLockTimeoutError(tag, { cause: error });
  const reason = error instanceof Error ? error.message : String(error);
  return new AllocationError(tag, `Allocation for tag "${tag}" failed: ${reason}`, {
    cause: error,
  });
}

/**
 * The driver's error inside TypeORM's `QueryFailedError`, told by shape rather than by
 * `instanceof` so that the stores load no TypeORM code of their own (the application's
 * TypeORM made the error): `undefined` for anything else.
 */
export function driverErrorOf(error: unknown): Record<string, unknown> | undefined {
  if (!(error instanceof Error) || error.name !== 'QueryFailedError') return undefined;
  const driverError = (error as { driverError?: unknown }).driverError;
  return typeof driverError === 'object' && driverError !== null
    ? (driverError as Record<string, unknown>)
    : undefined;
}
