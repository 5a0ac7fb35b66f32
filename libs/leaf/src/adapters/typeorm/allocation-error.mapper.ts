import { AllocationError, AllocationLockTimeoutError } from '../../core/errors/allocation.error';
import { LeafError, messageOf } from '../../core/errors/leaf.error';

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
  const reason = messageOf(error);
  return new AllocationError(tag, `Allocation for tag "${tag}" failed: ${reason}`, {
    cause: error,
  });
}

/**
 * Every code a database error carries, wherever the driver or the ORM put it: `errno`,
 * `code`, `sqlState` and `originalCode` of the error and of what it wraps — TypeORM's
 * `driverError`, Prisma's `meta.driverAdapterError.cause`, Drizzle's and MikroORM's `cause` —
 * at most five levels down. Each dialect's `isLockError` and `isDuplicate` look for theirs
 * here, so that an in-transaction caller's ORM (docs/gapless.md) is understood as TypeORM is.
 */
export function driverCodesOf(error: unknown): Array<string | number> {
  const codes: Array<string | number> = [];
  const visit = (value: unknown, depth: number): void => {
    if (typeof value !== 'object' || value === null || depth > 5) return;
    const e = value as Record<string, unknown>;
    for (const field of ['errno', 'code', 'sqlState', 'originalCode']) {
      const code = e[field];
      if (typeof code === 'string' || typeof code === 'number') codes.push(code);
    }
    for (const field of ['driverError', 'driverAdapterError', 'cause', 'meta', 'originalError'])
      visit(e[field], depth + 1);
  };
  visit(error, 0);
  return codes;
}
