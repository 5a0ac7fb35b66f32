import { LeafError, LeafErrorCode } from './leaf.error';

/** The module is shutting down and no longer issues IDs. */
export class ShuttingDownError extends LeafError {
  readonly code = LeafErrorCode.SHUTTING_DOWN;
  override readonly retryAfterMs = 1000;

  constructor() {
    super('Leaf is shutting down');
  }
}
