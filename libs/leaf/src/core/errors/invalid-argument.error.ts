import { LeafError, LeafErrorCode } from './leaf.error';

/** A caller passed a malformed key, count or ID. Nothing was touched. */
export class InvalidArgumentError extends LeafError {
  readonly code = LeafErrorCode.INVALID_ARGUMENT;

  constructor(
    message: string,
    readonly argument: string,
  ) {
    super(message);
  }
}
