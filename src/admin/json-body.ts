import { InvalidArgumentError } from 'nestjs-leaf/errors';

/**
 * A request body that is a JSON object with no field outside `allowed` (the admin and gapless
 * routes), checked before anything is queried.
 * @throws {InvalidArgumentError} naming the first field that is not allowed.
 */
export function objectBody(body: unknown, allowed: readonly string[]): Record<string, unknown> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new InvalidArgumentError('the body must be a JSON object', 'body');
  }
  for (const field of Object.keys(body)) {
    if (!allowed.includes(field)) {
      throw new InvalidArgumentError(
        `unknown or fixed field "${field}" (allowed: ${allowed.join(', ')})`,
        field,
      );
    }
  }
  return body as Record<string, unknown>;
}

/** `fields` without those left `undefined` (not given), to spread into a new row or a change. */
export function givenFields<T extends object>(fields: T): Partial<T> {
  return Object.fromEntries(
    Object.entries(fields).filter(([, value]) => value !== undefined),
  ) as Partial<T>;
}

/**
 * The `description` field of `body` to spread into a new row or a change: `{}` without one,
 * else a string, or `null` to clear it.
 * @throws {InvalidArgumentError} for anything else.
 */
export function descriptionOf(body: Record<string, unknown>): { description?: string | null } {
  const value = body.description;
  if (value === undefined) return {};
  if (value === null || typeof value === 'string') return { description: value };
  throw new InvalidArgumentError('description must be a string or null', 'description');
}
