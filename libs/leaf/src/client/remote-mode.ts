/** What the remote client checks of a caller's mode and of a server's IDs. */
import { InvalidArgumentError } from '../core/errors/invalid-argument.error';

const DECIMAL = /^\d{1,19}$/;

/** The modes served by the servers on every call (no local cache). */
export type RemoteMode = 'snowflake' | 'sequence';

/** A mode from an untyped caller: anything but the three modes is the caller's mistake. */
export function assertRemoteMode(mode: unknown): asserts mode is RemoteMode {
  if (mode !== 'snowflake' && mode !== 'sequence') {
    throw new InvalidArgumentError('mode must be "segment", "snowflake" or "sequence"', 'mode');
  }
}

/** A decimal ID of a server's answer; throws (the caller then fails that server over) otherwise. */
export function decimal(value: unknown): bigint {
  if (typeof value !== 'string' || !DECIMAL.test(value)) throw new Error('not a decimal ID');
  return BigInt(value);
}
