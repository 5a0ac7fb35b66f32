import { LeafError, type LeafErrorCode } from './leaf.error';

/**
 * An error a Leaf server answered with, for a code whose own class needs details the JSON
 * body does not carry (clock offsets, worker IDs, ...). It has the server's `code`,
 * `message`, `leafCode` and `Retry-After`; switch on `code` as for any {@link LeafError}.
 */
export class RemoteLeafError extends LeafError {
  override readonly leafCode: number | undefined;
  override readonly retryAfterMs: number | undefined;

  constructor(
    readonly code: LeafErrorCode,
    message: string,
    /** The HTTP status of the answer. */
    readonly statusCode: number,
    details: { leafCode?: number; retryAfterMs?: number } = {},
  ) {
    super(message);
    this.leafCode = details.leafCode;
    this.retryAfterMs = details.retryAfterMs;
  }
}
