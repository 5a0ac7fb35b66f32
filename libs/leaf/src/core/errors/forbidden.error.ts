import { LeafError, LeafErrorCode } from './leaf.error';

/**
 * The caller proved who it is, but its credential does not allow this request: a client token
 * not scoped to the route's mode or tag, or a request larger than the client's quota could
 * ever grant (HTTP 403). Retrying does not help; nothing was issued.
 */
export class ForbiddenError extends LeafError {
  readonly code = LeafErrorCode.FORBIDDEN;

  constructor(message = 'this credential does not allow the request') {
    super(message);
  }
}
