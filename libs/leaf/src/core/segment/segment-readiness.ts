import { LeafError } from '../errors/leaf.error';
import { publicMessage } from '../errors/public-message';
import type { AllocSourceProblem, AllocSourceStatus } from './multi-alloc.store';
import type { TagRepair } from './range-loader';
import type { TagRunway } from './runway-sampler';

/** Segment readiness as `SegmentCache.readiness` computes it ({@link segmentReadiness}). */
export interface SegmentReadiness {
  readonly ready: boolean;
  /** Why not ready (absent when ready). */
  readonly reason?: string;
  /** True when the most recent allocation (any tag) failed. */
  readonly allocationFailing: boolean;
  /** The cause of that failure. */
  readonly lastAllocationError: string | null;
  /** Every known tag with IDs in memory or traffic. */
  readonly tags: TagRunway[];
  /**
   * Each database and the problems of their tables, when several serve the tags
   * (docs/design.md, "Several databases per tag").
   */
  readonly databases?: {
    readonly sources: AllocSourceStatus[];
    readonly problems: AllocSourceProblem[];
  };
  /**
   * The high-water mark (set by the Nest layer), with the newest repair of each tag that had
   * one since start (at most 20, newest first).
   */
  readonly highWater?: HighWaterStatus & { readonly repairs: readonly TagRepair[] };
}

/** State of the high-water mark, as readiness reports it. */
export interface HighWaterStatus {
  /** `off`: not configured (segment-only protection); `on`: reachable; `unavailable`: configured, its store not reachable (allocations refused, IDs in memory still served). */
  readonly state: 'off' | 'on' | 'unavailable';
  /** Which store holds the marks (its adapter's `kind`: `zookeeper`, `database`); `null` when off. */
  readonly store?: string | null;
  /** The parent znode of the marks, or `host:port/database` of their database; `null` when off. */
  readonly root: string | null;
}

/** What {@link segmentReadiness} looks at. */
export interface ReadinessInput {
  readonly closing: boolean;
  /** True once the tag list was read. */
  readonly initialized: boolean;
  readonly tags: TagRunway[];
  /** The most recent allocation's failure, any tag; `null`: it succeeded. */
  readonly lastAllocationError: unknown;
  /** Each database and the problems of their tables, when several serve the tags. */
  readonly databases: SegmentReadiness['databases'] | null;
}

/**
 * Readiness that leads: not ready before the tag list is loaded, once closing, and when the
 * most recent allocation failed while some active tag's runway is below `runwayThresholdMs`
 * (IDs are still served, but will run out before the database is likely back). A threshold
 * of 0 turns the runway rule off.
 */
export function segmentReadiness(
  input: ReadinessInput,
  runwayThresholdMs: number,
): SegmentReadiness {
  const { tags, databases } = input;
  const error = input.lastAllocationError;
  const base = {
    allocationFailing: error !== null,
    lastAllocationError: error === null ? null : describeError(error),
    tags,
    ...(databases ? { databases } : {}),
  };
  if (input.closing) return { ...base, ready: false, reason: 'shutting down' };
  if (!input.initialized) return { ...base, ready: false, reason: 'tag list not loaded' };
  if (databases && databases.problems.length > 0) {
    const list = databases.problems.map((p) => `${p.tag}: ${p.detail}`).join('; ');
    return { ...base, ready: false, reason: `the databases disagree on tags: ${list}` };
  }
  if (error !== null && runwayThresholdMs > 0) {
    const short = tags.filter((t) => t.runwayMs !== null && t.runwayMs < runwayThresholdMs);
    if (short.length > 0) {
      const list = short.map((t) => `${t.tag} (${t.runwayMs} ms)`).join(', ');
      return {
        ...base,
        ready: false,
        reason: `allocations failing (${describeError(error)}); runway below ${runwayThresholdMs} ms: ${list}`,
      };
    }
  }
  return { ...base, ready: true };
}

/**
 * The failure as readiness shows it: readiness answers anyone, so a driver's words (which may
 * quote input or an internal address) stay in the server log ({@link publicMessage}).
 */
function describeError(error: unknown): string {
  if (error instanceof LeafError) return `${error.name}: ${publicMessage(error)}`;
  return error instanceof Error
    ? `${error.name}: the allocation failed; the cause is in the server log`
    : 'the allocation failed; the cause is in the server log';
}
