import type { WorkerNodeData } from './worker-node';
import type { WorkerState } from './worker-state';

/**
 * Nodes written by the Java Leaf carry only `timestamp`, refreshed every 3 s: such a worker
 * may have issued IDs up to one heartbeat after it.
 */
export const LEGACY_LEAF_HEARTBEAT_MS = 3000;

/** What a starting run must wait past before its first ID, and why. */
export interface StartupBound {
  /** The clock must be past this millisecond. */
  readonly bound: number;
  /** Where the bound comes from, for logs and errors. */
  readonly source: string;
  /**
   * What the node records for the committer: the time of its last write and its horizon
   * (local-only extensions of this run never pass it); `null` for a node created now.
   */
  readonly remote: { readonly writtenAt: number; readonly horizon: number } | null;
}

/**
 * The lease and horizon a worker node records for its last writer: the Java Leaf's
 * `timestamp` + one heartbeat, a node from before horizons `timestamp + localRunwayMs` (of
 * the reader, as all hosts were configured alike then).
 */
export function nodeLeaseOf(data: WorkerNodeData, localRunwayMs: number) {
  const legacyLeaf = data.reservedUntil === undefined;
  const lease = Math.max(
    data.timestamp,
    data.reservedUntil ?? data.timestamp + LEGACY_LEAF_HEARTBEAT_MS,
  );
  const horizon = Math.max(
    lease,
    data.horizon ?? (legacyLeaf ? lease : data.timestamp + localRunwayMs),
  );
  return { lease, horizon, legacyLeaf };
}

/** Inputs of {@link startupBoundFromNode}. */
export interface StartupBoundInput {
  /** Path of the worker node. */
  readonly path: string;
  /** Its data, read after this run took the liveness node (so no earlier holder can still write it). */
  readonly data: WorkerNodeData;
  /** True when this run's registration created the node. */
  readonly created: boolean;
  /**
   * This host's state file for the same node, when usable. The caller holds its lock, so the
   * run that wrote it has ended.
   */
  readonly cached: WorkerState | null;
  /** The path of the state file, for the source text. */
  readonly stateFile: string;
  /**
   * This run's `localRunwayMs`: assumed for the writer of a node that records a lease but no
   * horizon (written before horizons existed, when every host was configured alike).
   */
  readonly localRunwayMs: number;
}

/**
 * The start-up bound of a worker with ZooKeeper (docs/design.md, "Snowflake safety").
 * Pure: the whole safety argument of a takeover is in this function.
 *
 * - A node this run created: nothing carries the worker ID yet.
 * - A node whose last writer is the run that kept this host's state file (same run id, or
 *   for files and nodes from before run ids, the same write time): that run has ended
 *   (the caller holds the state lock), and every bound it used is in the file or the node,
 *   so the bound is the larger of the two.
 * - Any other writer (another host with the same identity, or this host's state lost) may
 *   still be issuing on its local runway, cut off from ZooKeeper: wait past the horizon it
 *   recorded, which uses its own `localRunwayMs`, not ours.
 */
export function startupBoundFromNode(input: StartupBoundInput): StartupBound {
  const { path, data, cached } = input;
  if (input.created) {
    return { bound: data.timestamp - 1, source: `new node ${path}`, remote: null };
  }
  const { lease, horizon, legacyLeaf } = nodeLeaseOf(data, input.localRunwayMs);
  const remote = { writtenAt: data.timestamp, horizon };
  const lastWriterKeptFile =
    cached !== null &&
    !legacyLeaf &&
    (data.run !== undefined ? data.run === cached.run : cached.zkSyncedAt === data.timestamp);
  if (lastWriterKeptFile) {
    return {
      bound: Math.max(lease, cached.reservedUntil),
      source: `node ${path} and state file ${input.stateFile} (their last writer, this host's previous run, has ended)`,
      remote,
    };
  }
  const source = legacyLeaf
    ? `node ${path} (written by the Java Leaf: timestamp + ${LEGACY_LEAF_HEARTBEAT_MS} ms)`
    : `node ${path} horizon: its last writer${data.run ? ` (run ${data.run})` : ''} may issue IDs on its local runway until then unless it has ended` +
      (data.horizon === undefined
        ? ` (no horizon recorded: timestamp + this run's localRunwayMs, ${input.localRunwayMs} ms)`
        : '');
  if (cached && cached.reservedUntil > horizon) {
    return { bound: cached.reservedUntil, source: `state file ${input.stateFile}`, remote };
  }
  return { bound: horizon, source, remote };
}
