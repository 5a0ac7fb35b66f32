import { LeafConfigurationError } from '../errors/leaf-configuration.error';

/**
 * What answers an ID synchronously: `SegmentService` and `SnowflakeService` (in-process) and
 * `LeafClient` (segment IDs from its cached ranges) all have `getSync(key)`.
 */
export interface LeafSyncIdSource {
  getSync(key: string): bigint;
}

/** A per-key handle that answers synchronously: `SegmentService.generator(tag)`'s. */
export interface LeafSyncIdHandle {
  next(): bigint;
}

/** A source, a handle, or a function that returns one when the ORM asks (resolved on each call). */
export type LeafSyncIdProvider =
  LeafSyncIdSource | LeafSyncIdHandle | (() => LeafSyncIdSource | LeafSyncIdHandle);

const NO_SOURCE =
  'leafIdDefault needs a source with getSync(key) and a key, or a handle with next()';

function take(provider: LeafSyncIdProvider, key: string | undefined): bigint {
  const source = typeof provider === 'function' ? provider() : provider;
  if (source && typeof (source as LeafSyncIdHandle).next === 'function')
    return (source as LeafSyncIdHandle).next();
  if (source && typeof (source as LeafSyncIdSource).getSync === 'function' && key !== undefined)
    return (source as LeafSyncIdSource).getSync(key);
  throw new LeafConfigurationError([NO_SOURCE]);
}

function check(provider: LeafSyncIdProvider, key: string | undefined): void {
  if (typeof provider === 'function') return;
  const ok =
    typeof (provider as LeafSyncIdHandle | undefined)?.next === 'function' ||
    (typeof (provider as LeafSyncIdSource | undefined)?.getSync === 'function' &&
      typeof key === 'string' &&
      key.length > 0);
  if (!ok) throw new LeafConfigurationError([NO_SOURCE]);
}

/**
 * A synchronous default for an ORM's ID column: Drizzle's `$defaultFn(...)`, MikroORM's
 * `onCreate`. Each call takes one ID on the warm in-process path (`getSync(key)`, or a
 * handle's `next()`), as a `bigint`. It never waits and never invents a value: when no ID is
 * at hand it throws the source's `LeafError` — `SegmentNotReadyError` (the tag's buffer is
 * empty: its load has been started; warm a tag with `await segments.get(tag)` at start),
 * `SnowflakeNotReadyError`, `TagNotFoundError` — and the insert does not happen.
 * @throws {LeafConfigurationError} when `provider` has neither `getSync` (with a key) nor `next`.
 */
export function leafIdDefault(provider: LeafSyncIdProvider, key?: string): () => bigint {
  check(provider, key);
  return () => take(provider, key);
}

/** {@link leafIdDefault} as a decimal string, for a column mapped to a string. */
export function leafIdStringDefault(provider: LeafSyncIdProvider, key?: string): () => string {
  check(provider, key);
  return () => take(provider, key).toString();
}
