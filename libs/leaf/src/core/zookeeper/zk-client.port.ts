/** Connection states reported by a {@link ZkClient}. */
export type ZkConnectionState =
  /** A session is established (first connect, reconnect, or a new session after expiry). */
  | 'connected'
  /** The connection dropped; the session may still be alive and the client is retrying. */
  | 'disconnected'
  /** The session expired; the client is opening a new one (ephemeral nodes are gone). */
  | 'expired';

/** Errors a {@link ZkClient} raises carry a stable `code`. */
export type ZkErrorCode =
  | 'NO_NODE'
  | 'NODE_EXISTS'
  | 'BAD_VERSION'
  | 'CONNECTION_LOSS'
  | 'SESSION_EXPIRED'
  | 'TIMEOUT'
  | 'CLOSED'
  | 'OTHER';

/** A failed ZooKeeper operation. */
export class ZkError extends Error {
  constructor(
    readonly zkCode: ZkErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'ZkError';
  }
}

/** True when `error` is a {@link ZkError} with code `code`. */
export function isZkError(error: unknown, code: ZkErrorCode): error is ZkError {
  return error instanceof ZkError && error.zkCode === code;
}

/** What `work` resolves to, or `null` when the node it needs is gone (`NO_NODE`). @throws other failures */
export async function unlessNoNode<T>(work: Promise<T>): Promise<T | null> {
  try {
    return await work;
  } catch (error) {
    if (isZkError(error, 'NO_NODE')) return null;
    throw error;
  }
}

/**
 * The narrow view of ZooKeeper the library needs. One real adapter
 * (`ZookeeperClient`, the only file that imports the `zookeeper` package) and a fake in
 * `testing/`. Paths are absolute; data are Buffers.
 */
export interface ZkClient {
  /** True while a session is connected. */
  readonly connected: boolean;
  /**
   * The session timeout the server granted for the current session (it clamps the requested
   * one into its own bounds), or `null` while no session is established. Leases bounded by
   * the session (sequence mode's issuer, docs/design.md "Sequence mode") use the smaller of
   * this and the requested timeout.
   */
  readonly negotiatedSessionTimeoutMs: number | null;
  /**
   * Opens the session. Resolves once connected.
   * @throws {ZkError} `TIMEOUT` when no connection was made within `timeoutMs`.
   */
  connect(timeoutMs: number): Promise<void>;
  /** Subscribes to state changes; returns the unsubscribe function. */
  onStateChange(listener: (state: ZkConnectionState) => void): () => void;
  /** Creates every missing node of `path` (persistent, empty data). Existing nodes are fine. */
  mkdirp(path: string): Promise<void>;
  /** Creates a persistent sequential node `prefix` + 10-digit sequence; returns the created path. */
  createPersistentSequential(prefix: string, data: Buffer): Promise<string>;
  /**
   * Creates an ephemeral node: it lives as long as this client's current session and is
   * deleted by ZooKeeper when the session ends (close or expiry).
   * @throws {ZkError} `NODE_EXISTS` when `path` exists; `NO_NODE` when its parent is missing.
   */
  createEphemeral(path: string, data: Buffer): Promise<void>;
  /**
   * Creates an ephemeral sequential node `prefix` + 10-digit sequence, owned by the current
   * session; returns the created path.
   * @throws {ZkError} `NO_NODE` when the parent is missing; `CONNECTION_LOSS` leaves it
   *   unknown whether the node was created.
   */
  createEphemeralSequential(prefix: string, data: Buffer): Promise<string>;
  /** Child names (not paths) of `path`. @throws {ZkError} `NO_NODE` */
  getChildren(path: string): Promise<string[]>;
  /** Data and version of `path`. @throws {ZkError} `NO_NODE` */
  getData(path: string): Promise<{ data: Buffer; version: number }>;
  /** Overwrites the data of `path` (`version` -1 = any). @throws {ZkError} `NO_NODE`, `BAD_VERSION` */
  setData(path: string, data: Buffer, version?: number): Promise<void>;
  /** Deletes `path` (`version` -1 = any). @throws {ZkError} `NO_NODE` */
  delete(path: string, version?: number): Promise<void>;
  /** Closes the session and stops reconnecting. Never throws. */
  close(): Promise<void>;
}
