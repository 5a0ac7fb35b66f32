import { assertValidKey } from '../arguments';
import type { Clock } from '../clock';
import { ConcurrencyLimiter } from '../concurrency-limiter';
import { ExpiringKeys } from '../expiring-keys';
import { ModeDisabledError } from '../errors/mode-disabled.error';
import { SegmentNotInitializedError } from '../errors/segment-not-initialized.error';
import { ShuttingDownError } from '../errors/shutting-down.error';
import { TagNotFoundError } from '../errors/tag-not-found.error';
import type { LeafAllocStore } from './leaf-alloc-store.port';
import type { SegmentBuffer } from './segment-buffer';
import type { SegmentCacheOptions } from './segment-cache.options';

/** Unknown keys the negative cache remembers at most (`unknownTagCacheSize`'s default). */
const DEFAULT_UNKNOWN_TAG_CACHE_SIZE = 10_000;
/** Look-ups of unknown keys running against the database at once (the rest queue). */
const LOOKUP_CONCURRENCY = 2;
/** Look-ups of distinct unknown keys allowed in flight or queued; beyond, `TagNotFoundError` at once. */
const MAX_PENDING_LOOKUPS = 256;

/** What {@link TagDiscovery} needs of the cache whose tags it finds. */
export interface DiscoveryHost {
  /** `null`: segment mode is off. */
  readonly store: LeafAllocStore | null;
  isClosing(): boolean;
  /** False until the tag list was read once. */
  isInitialized(): boolean;
  /** The key's buffer, when it has one. */
  existing(key: string): SegmentBuffer | undefined;
  /** Creates the buffer of a tag the table has. */
  add(key: string): SegmentBuffer;
}

/**
 * A `SegmentCache`'s keys that have no buffer: what they are answered before any query
 * ({@link TagDiscovery.checkUnknown}), and the look-up in the table with its negative cache
 * ({@link TagDiscovery.discover}).
 */
export class TagDiscovery {
  /**
   * Negative cache: unknown keys answered `TagNotFoundError` without a query until their
   * deadline (`unknownTagTtlMs`), at most `unknownTagCacheSize`, least recently used out first.
   */
  private readonly absent: ExpiringKeys;
  /** Look-ups of unknown keys in flight: concurrent requests for one key share one query. */
  private readonly lookups = new Map<string, Promise<SegmentBuffer>>();
  private readonly lookupLimiter = new ConcurrencyLimiter(LOOKUP_CONCURRENCY);

  constructor(
    private readonly host: DiscoveryHost,
    private readonly options: SegmentCacheOptions,
    private readonly clock: Clock,
  ) {
    this.absent = new ExpiringKeys(options.unknownTagCacheSize ?? DEFAULT_UNKNOWN_TAG_CACHE_SIZE);
  }

  /** Forgets a negative-cache entry: the tag is in the table now. */
  forget(tag: string): void {
    this.absent.delete(tag);
  }

  /**
   * Throws what a key without a buffer is answered before any look-up: mode off, malformed
   * key, closing, tag list not read yet, or a key the database did not have within
   * `unknownTagTtlMs` (the negative cache).
   */
  checkUnknown(key: string): void {
    if (!this.host.store) throw new ModeDisabledError('segment');
    assertValidKey(key);
    if (this.host.isClosing()) throw new ShuttingDownError();
    if (!this.host.isInitialized()) throw new SegmentNotInitializedError();
    if (this.absent.has(key, this.clock.now())) throw new TagNotFoundError(key);
  }

  /**
   * The buffer of a key created after the last tag refresh (on any instance): one
   * `findTag` per key at a time, shared by every concurrent request for it, at most
   * {@link LOOKUP_CONCURRENCY} queries at once. A key the database does not have is
   * remembered for `unknownTagTtlMs`, so random keys cost one query each per period.
   */
  discover(key: string): Promise<SegmentBuffer> {
    try {
      this.checkUnknown(key);
    } catch (error) {
      return Promise.reject(error);
    }
    const known = this.host.existing(key);
    if (known) return Promise.resolve(known);
    const pending = this.lookups.get(key);
    if (pending) return pending;
    // Beyond this many distinct keys in flight, nobody waits in a queue of random keys.
    if (this.lookups.size >= MAX_PENDING_LOOKUPS) return Promise.reject(new TagNotFoundError(key));
    const store = this.host.store!; // checked above
    const lookup = this.lookupLimiter
      .run(() => store.findTag(key))
      .then((row) => this.admit(key, row !== null))
      .finally(() => this.lookups.delete(key));
    this.lookups.set(key, lookup);
    return lookup;
  }

  /** The outcome of a look-up: a buffer for a row found, the negative cache otherwise. */
  private admit(key: string, exists: boolean): SegmentBuffer {
    if (this.host.isClosing()) throw new ShuttingDownError();
    if (!exists) {
      this.absent.add(key, this.clock.now() + (this.options.unknownTagTtlMs ?? 5000));
      throw new TagNotFoundError(key);
    }
    return this.host.add(key);
  }
}
