import { LeafError, LeafErrorCode } from './leaf.error';

/** A protected route was called without the right credentials (HTTP 401). */
export class UnauthorizedError extends LeafError {
  readonly code = LeafErrorCode.UNAUTHORIZED;

  constructor(message = 'a valid bearer token is required') {
    super(message);
  }
}
