import { LeafError } from './leaf.error';

/**
 * True when `error`'s cause chain holds an error that is not a {@link LeafError}: a driver's,
 * a socket's, ZooKeeper's. Its message may quote it (`invalid byte sequence for encoding
 * "UTF8": 0x00`, an internal address), so an answer never carries it ({@link publicMessage}).
 */
export function wrapsForeignError(error: LeafError): boolean {
  let cause: unknown = error.cause;
  for (let depth = 0; cause !== undefined && cause !== null && depth < 8; depth++) {
    if (!(cause instanceof LeafError)) return true;
    cause = cause.cause;
  }
  return false;
}

/**
 * The message an answer may carry: the error's own, or, when it wraps a foreign error
 * ({@link wrapsForeignError}), a generic one naming the code and the tag; the full message
 * and its cause go to the server log ({@link LeafExceptionFilter}).
 */
export function publicMessage(error: LeafError): string {
  if (!wrapsForeignError(error)) return error.message;
  const tag = (error as { tag?: unknown }).tag;
  const subject = typeof tag === 'string' && tag !== '*' ? `Tag "${tag}": ` : '';
  return `${subject}the request failed (${error.code}); the cause is in the server log`;
}
