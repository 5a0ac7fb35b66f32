import { createHash, timingSafeEqual } from 'node:crypto';

/** Injection token of the application's {@link AdminAccess}. */
export const ADMIN_ACCESS = Symbol('ADMIN_ACCESS');

/** Who may call the admin routes and the monitoring pages (from `LEAF_ADMIN_TOKEN`, `LEAF_MONITOR_PAGES`). */
export interface AdminAccess {
  /** The bearer token; `null` = no admin routes. */
  readonly token: string | null;
  readonly monitorPages: 'open' | 'token' | 'off';
}

/** The token of an `Authorization: Bearer <token>` header, or `null`. */
export function bearerToken(header: string | string[] | undefined): string | null {
  if (typeof header !== 'string') return null;
  const match = /^Bearer[ ]+(\S+)\s*$/i.exec(header);
  return match ? match[1] : null;
}

/**
 * True when `given` is the expected token. Compared in constant time: both sides are hashed
 * to SHA-256 first, so the comparison (`crypto.timingSafeEqual`) is always between two
 * 32-byte digests and neither the content nor the length of the secret leaks through
 * timing.
 */
export function tokenMatches(given: string | null, expected: string): boolean {
  const a = createHash('sha256')
    .update(given ?? '', 'utf8')
    .digest();
  const b = createHash('sha256').update(expected, 'utf8').digest();
  // Always compare, even for a missing token: the answer takes the same time either way.
  return timingSafeEqual(a, b) && given !== null;
}
