import type { WorkerStateCorruptError } from '../errors/worker-state-corrupt.error';
import { SNOWFLAKE_MAX_WORKER_ID } from './snowflake-layout';
import { isTime } from './worker-node';

/** Identity of the instance a state file belongs to. */
export type WorkerIdentity =
  | {
      readonly kind: 'zookeeper';
      readonly name: string;
      readonly ip: string;
      readonly port: number;
    }
  | { readonly kind: 'embedded'; readonly name: string; readonly workerId: number }
  /** A worker ID leased from the database: the file follows the holder, whatever ID it gets. */
  | { readonly kind: 'database'; readonly name: string; readonly holder: string };

/**
 * Contents of the local state file (format version 2; version 1 files, written before the
 * run id and the horizon existed, are read with `run` and `zkHorizon` set to `null`).
 */
export interface WorkerState {
  readonly version: 2;
  /** The module's `name` (ZooKeeper namespace). */
  readonly name: string;
  /** `ip:port` in ZooKeeper mode, `embedded` otherwise. */
  readonly identity: string;
  readonly workerId: number;
  /** The time lease: no ID of this worker has a timestamp beyond it. */
  readonly reservedUntil: number;
  /** Path of the ZooKeeper node the worker ID came from; `null` in embedded mode. */
  readonly zkNode: string | null;
  /** Local time of the last successful write to the ZooKeeper node; `null` in embedded mode or before the first. */
  readonly zkSyncedAt: number | null;
  /**
   * The horizon recorded in the ZooKeeper node by the last successful write of this run or
   * the one it started from: local-only extensions never pass it. `null` in embedded mode,
   * before the first write, and in version 1 files.
   */
  readonly zkHorizon: number | null;
  /** Random id of the run (process start) that wrote the file; `null` in version 1 files. */
  readonly run: string | null;
  /** When this file was written. */
  readonly updatedAt: number;
}

/** What {@link WorkerStateStore.read} found. */
export type WorkerStateReadResult =
  | { readonly status: 'missing' }
  | { readonly status: 'ok'; readonly state: WorkerState }
  | { readonly status: 'corrupt'; readonly error: WorkerStateCorruptError };

/** What the file records of an owner: its identity, its file name's part, whether it needs a node. */
type OwnerRecord = { readonly identity: string; readonly file: string; readonly node: boolean };

/** The state file's record of each kind of owner (the only place that tells them apart). */
const OWNERS: {
  readonly [K in WorkerIdentity['kind']]: (
    owner: Extract<WorkerIdentity, { kind: K }>,
  ) => OwnerRecord;
} = {
  zookeeper: (o) => ({
    identity: `${o.ip}:${o.port}`,
    file: `${safeSegment(o.ip)}_${o.port}`,
    node: true,
  }),
  database: (o) => ({
    identity: `database:${o.holder}`,
    file: `database-${safeSegment(o.holder)}`,
    node: false,
  }),
  embedded: (o) => ({ identity: 'embedded', file: `embedded-${o.workerId}`, node: false }),
};

const recordOf = (owner: WorkerIdentity): OwnerRecord =>
  (OWNERS[owner.kind] as (owner: WorkerIdentity) => OwnerRecord)(owner);

/** `ip:port` with ZooKeeper, `database:holder` with a database lease, else `embedded`. */
export function identityString(identity: WorkerIdentity): string {
  return recordOf(identity).identity;
}

function safeSegment(text: string): string {
  return text.replace(/[^A-Za-z0-9.-]/g, '_');
}

/**
 * The file name of the state of `identity`, unique per name and identity so that
 * instances sharing a state directory never share a file:
 * `snowflake-{name}-{ip}_{port}.json` with ZooKeeper (characters other than
 * `[A-Za-z0-9.-]` of the ip, e.g. IPv6 colons, become `_`),
 * `snowflake-{name}-database-{holder}.json` with a database lease, and
 * `snowflake-{name}-embedded-{workerId}.json` without.
 */
export function workerStateFileName(identity: WorkerIdentity): string {
  return `snowflake-${safeSegment(identity.name)}-${recordOf(identity).file}.json`;
}

/** The state to write: everything but the fields the store derives from its owner. */
export type WorkerStateUpdate = Omit<WorkerState, 'version' | 'name' | 'identity'>;

/** The exclusive lock of a state, held for the whole life of a worker. */
export interface WorkerStateLockHandle {
  /** Where the lock lives, for monitoring. */
  readonly path: string;
  /** Releases it. Never throws; idempotent. */
  release(): Promise<void>;
}

/**
 * Port: the local state of one worker identity (docs/design.md, "Snowflake safety"). The
 * library's adapter is a JSON file with an operating-system lock (`adapters/fs`); the
 * testing entry has an in-memory one.
 */
export interface WorkerStateStore {
  /** Where the state lives, for logs and errors. */
  readonly path: string;
  /**
   * Takes the exclusive lock of this state for the life of the worker: held while the
   * process lives (paused or not), released when it ends however it ends.
   * @throws {WorkerStateLockedError} when another holder has it.
   */
  lock(startedAt: number): Promise<WorkerStateLockHandle>;
  /** Reads and validates the state. Never throws: problems come back as `corrupt`. */
  read(): Promise<WorkerStateReadResult>;
  /**
   * Replaces the state atomically and durably (its identity fields come from the owner).
   * @throws when it could not be made durable; the previous state is then intact.
   */
  write(state: WorkerStateUpdate): Promise<void>;
}

/** Creates the store of one identity. */
export type WorkerStateStoreFactory = (identity: WorkerIdentity) => WorkerStateStore;

/**
 * Checks parsed JSON against the state format for `owner` (versions 1 and 2).
 * @returns the state (version 1 read with `run` and `zkHorizon` null), or the problem found.
 */
export function parseWorkerState(
  raw: unknown,
  owner: WorkerIdentity,
): { readonly state: WorkerState } | { readonly problem: string } {
  const problem = validate(raw, owner);
  if (problem !== null) return { problem };
  const state = raw as Omit<WorkerState, 'version'> & { version: 1 | 2 };
  return {
    state:
      state.version === 2
        ? (state as WorkerState)
        : { ...state, version: 2, zkHorizon: null, run: null },
  };
}

function validate(raw: unknown, owner: WorkerIdentity): string | null {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
    return 'it is not a JSON object';
  const s = raw as Record<string, unknown>;
  const identity = identityString(owner);
  if (s.version !== 1 && s.version !== 2)
    return `unknown format version ${JSON.stringify(s.version)}`;
  if (s.name !== owner.name || s.identity !== identity) {
    return `it belongs to ${JSON.stringify(s.name)} / ${JSON.stringify(s.identity)}, not to ${JSON.stringify(owner.name)} / ${JSON.stringify(identity)} (copied from another host or instance?)`;
  }
  if (
    !Number.isInteger(s.workerId) ||
    (s.workerId as number) < 0 ||
    (s.workerId as number) > SNOWFLAKE_MAX_WORKER_ID
  ) {
    return `workerId ${JSON.stringify(s.workerId)} is not in 0..${SNOWFLAKE_MAX_WORKER_ID}`;
  }
  // A configured worker ID (the only owner that names one) must be the file's.
  if ('workerId' in owner && s.workerId !== owner.workerId) {
    return `it records worker ID ${String(s.workerId)}, not the configured ${owner.workerId}`;
  }
  if (!isTime(s.reservedUntil)) return 'reservedUntil is missing or not a timestamp';
  if (!isTime(s.updatedAt)) return 'updatedAt is missing or not a timestamp';
  if (recordOf(owner).node) {
    if (typeof s.zkNode !== 'string' || s.zkNode === '') return 'zkNode is missing';
    if (s.zkSyncedAt !== null && !isTime(s.zkSyncedAt)) return 'zkSyncedAt is not a timestamp';
  }
  if (s.version === 2) {
    if (s.zkHorizon !== null && !isTime(s.zkHorizon)) return 'zkHorizon is not a timestamp';
    if (s.run !== null && typeof s.run !== 'string') return 'run is not a string';
  }
  return null;
}
