import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { WorkerStateCorruptError } from '../errors/worker-state-corrupt.error';
import { SNOWFLAKE_MAX_WORKER_ID } from './snowflake-layout';

/** Identity of the instance a state file belongs to. */
export type WorkerIdentity =
  | {
      readonly kind: 'zookeeper';
      readonly name: string;
      readonly ip: string;
      readonly port: number;
    }
  | { readonly kind: 'embedded'; readonly name: string; readonly workerId: number };

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

/** What {@link WorkerStateFile.read} found. */
export type WorkerStateReadResult =
  | { readonly status: 'missing' }
  | { readonly status: 'ok'; readonly state: WorkerState }
  | { readonly status: 'corrupt'; readonly error: WorkerStateCorruptError };

function identityString(identity: WorkerIdentity): string {
  return identity.kind === 'zookeeper' ? `${identity.ip}:${identity.port}` : 'embedded';
}

function safeSegment(text: string): string {
  return text.replace(/[^A-Za-z0-9.-]/g, '_');
}

/**
 * The file name of the state of `identity`, unique per name and identity so that
 * instances sharing a state directory never share a file:
 * `snowflake-{name}-{ip}_{port}.json` with ZooKeeper (characters other than
 * `[A-Za-z0-9.-]` of the ip, e.g. IPv6 colons, become `_`), and
 * `snowflake-{name}-embedded-{workerId}.json` without.
 */
export function workerStateFileName(identity: WorkerIdentity): string {
  const who =
    identity.kind === 'zookeeper'
      ? `${safeSegment(identity.ip)}_${identity.port}`
      : `embedded-${identity.workerId}`;
  return `snowflake-${safeSegment(identity.name)}-${who}.json`;
}

const isTime = (value: unknown): value is number =>
  Number.isSafeInteger(value) && (value as number) >= 0;

/**
 * The local snowflake state: `{ workerId, reservedUntil, ... }` of one identity, so that a
 * restart while ZooKeeper is down is still time-checked, and so the embedded mode has a
 * time lease at all.
 *
 * Written atomically (temp file, fsync, rename, fsync of the directory): a crash leaves the
 * old or the new content, never a torn one. The file records its identity; a file whose
 * identity does not match (copied from another host or instance) is refused, not used.
 */
export class WorkerStateFile {
  /** Absolute path of the file. */
  readonly path: string;
  private readonly identity: string;

  constructor(
    /** Directory of the state files (created if missing). */
    readonly dir: string,
    private readonly owner: WorkerIdentity,
  ) {
    this.path = path.resolve(dir, workerStateFileName(owner));
    this.identity = identityString(owner);
  }

  /** Reads and validates the file. Never throws: problems come back as `corrupt`. */
  async read(): Promise<WorkerStateReadResult> {
    let text: string;
    try {
      text = await fs.readFile(this.path, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { status: 'missing' };
      return {
        status: 'corrupt',
        error: this.corrupt(`it cannot be read (${(error as Error).message})`, error),
      };
    }
    let raw: unknown;
    try {
      raw = JSON.parse(text);
    } catch (error) {
      return { status: 'corrupt', error: this.corrupt('it is not valid JSON', error) };
    }
    const problem = this.validate(raw);
    if (problem) return { status: 'corrupt', error: this.corrupt(problem) };
    const state = raw as Omit<WorkerState, 'version'> & { version: 1 | 2 };
    return {
      status: 'ok',
      state:
        state.version === 2
          ? (state as WorkerState)
          : { ...state, version: 2, zkHorizon: null, run: null },
    };
  }

  /**
   * Replaces the file atomically and durably with `state` (its identity fields are set
   * from this file's owner).
   * @throws the file system's error; the previous content is then intact.
   */
  async write(state: Omit<WorkerState, 'version' | 'name' | 'identity'>): Promise<void> {
    const content: WorkerState = {
      version: 2,
      name: this.owner.name,
      identity: this.identity,
      ...state,
    };
    await fs.mkdir(this.dir, { recursive: true });
    const temp = `${this.path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
    let handle: fs.FileHandle | undefined;
    try {
      handle = await fs.open(temp, 'w', 0o644);
      await handle.writeFile(`${JSON.stringify(content, null, 2)}\n`, 'utf8');
      await handle.sync();
      await handle.close();
      handle = undefined;
      await fs.rename(temp, this.path);
    } catch (error) {
      await handle?.close().catch(() => undefined);
      await fs.rm(temp, { force: true }).catch(() => undefined);
      throw error;
    }
    await this.syncDirectory();
  }

  private async syncDirectory(): Promise<void> {
    // The rename is durable only once the directory entry is: fsync the directory too.
    // Windows cannot open a directory for fsync; there the rename is as durable as it gets.
    if (process.platform === 'win32') return;
    const handle = await fs.open(path.dirname(this.path), 'r');
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  }

  private validate(raw: unknown): string | null {
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
      return 'it is not a JSON object';
    const s = raw as Record<string, unknown>;
    if (s.version !== 1 && s.version !== 2)
      return `unknown format version ${JSON.stringify(s.version)}`;
    if (s.name !== this.owner.name || s.identity !== this.identity) {
      return `it belongs to ${JSON.stringify(s.name)} / ${JSON.stringify(s.identity)}, not to ${JSON.stringify(this.owner.name)} / ${JSON.stringify(this.identity)} (copied from another host or instance?)`;
    }
    if (
      !Number.isInteger(s.workerId) ||
      (s.workerId as number) < 0 ||
      (s.workerId as number) > SNOWFLAKE_MAX_WORKER_ID
    ) {
      return `workerId ${JSON.stringify(s.workerId)} is not in 0..${SNOWFLAKE_MAX_WORKER_ID}`;
    }
    if (this.owner.kind === 'embedded' && s.workerId !== this.owner.workerId) {
      return `it records worker ID ${String(s.workerId)}, not the configured ${this.owner.workerId}`;
    }
    if (!isTime(s.reservedUntil)) return 'reservedUntil is missing or not a timestamp';
    if (!isTime(s.updatedAt)) return 'updatedAt is missing or not a timestamp';
    if (this.owner.kind === 'zookeeper') {
      if (typeof s.zkNode !== 'string' || s.zkNode === '') return 'zkNode is missing';
      if (s.zkSyncedAt !== null && !isTime(s.zkSyncedAt)) return 'zkSyncedAt is not a timestamp';
    }
    if (s.version === 2) {
      if (s.zkHorizon !== null && !isTime(s.zkHorizon)) return 'zkHorizon is not a timestamp';
      if (s.run !== null && typeof s.run !== 'string') return 'run is not a string';
    }
    return null;
  }

  private corrupt(reason: string, cause?: unknown): WorkerStateCorruptError {
    return new WorkerStateCorruptError(
      this.path,
      reason,
      this.owner.kind === 'zookeeper'
        ? 'With ZooKeeper reachable the file is not needed (it is rewritten); without it the instance cannot prove which time its worker ID already used. ' +
            'Restore ZooKeeper, or restore the correct file; delete the file only while ZooKeeper is reachable.'
        : 'It holds the time lease of the embedded worker ID. Restore the correct file, or delete it after making sure the clock is right and ' +
            "no other instance uses this worker ID; a deleted file means start-up no longer waits for the previous run's lease.",
      { cause },
    );
  }
}
