import { LeafError, LeafErrorCode } from './leaf.error';

/**
 * The caller is over its quota (HTTP 429, with `Retry-After`): nothing was issued, and the
 * same request succeeds after `retryAfterMs`. Quotas are counted per instance.
 */
export class RateLimitedError extends LeafError {
  readonly code = LeafErrorCode.RATE_LIMITED;
  override readonly retryAfterMs: number;

  constructor(message: string, retryAfterMs: number) {
    super(message);
    this.retryAfterMs = retryAfterMs;
  }
}
