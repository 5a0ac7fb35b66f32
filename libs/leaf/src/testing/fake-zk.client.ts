import {
  ZkClient,
  ZkConnectionState,
  ZkError,
  ZkErrorCode,
} from '../core/zookeeper/zk-client.port';

/** The {@link ZkClient} calls {@link FakeZkClient.failNext} can make fail. */
export type FakeZkOperation =
  | 'connect'
  | 'mkdirp'
  | 'createPersistentSequential'
  | 'createEphemeral'
  | 'createEphemeralSequential'
  | 'getChildren'
  | 'getData'
  | 'setData'
  | 'delete';

interface FakeNode {
  data: Buffer;
  version: number;
  children: string[];
  /** ZooKeeper's parent `cversion`: counts every child ever created, never decreases. */
  createdChildren: number;
  /** The client whose session owns this ephemeral node; `null` for a persistent node. */
  ephemeralOwner: FakeZkClient | null;
}

/**
 * An in-memory {@link ZkClient} for unit tests, with ZooKeeper's semantics where the library
 * depends on them: sequential suffixes are the parent's count of children ever created
 * (10 digits, zero padded; deletions do not reuse numbers), data versions start at 0 and
 * grow by one per write, and `NO_NODE` / `NODE_EXISTS` / `BAD_VERSION` are raised as the
 * server would.
 *
 * It starts disconnected; `connect()` establishes the "session". Operations before that,
 * while disconnected or unavailable reject with `CONNECTION_LOSS`; after `close()` with
 * `CLOSED`. The test controls below drive failures. State listeners run synchronously.
 *
 * Ephemeral nodes belong to the client's "session": {@link simulateExpiry} and `close()`
 * delete them, and (as in ZooKeeper) they cannot have children. Several workers sharing one
 * fake share that session; for separate sessions on one tree (one worker's node vanishing
 * when it closes, as another sees it), give each its own client from {@link newSession}.
 * It passes the same contract suite as the real client (`contracts/zk-client.contract.ts`).
 */
export class FakeZkClient implements ZkClient {
  /** The tree, shared by every client made with {@link newSession}. */
  private readonly nodes: Map<string, FakeNode>;
  private readonly listeners = new Set<(state: ZkConnectionState) => void>();
  private readonly failures = new Map<FakeZkOperation, ZkErrorCode[]>();
  private readonly connectWaiters = new Set<{ resolve: () => void; timer: NodeJS.Timeout }>();
  private started = false;
  private isConnected = false;
  private closed = false;
  private linkDown = false;
  private unavailable = false;
  private loseNextCreateResponse = false;
  private grantedTimeoutMs: number | null = null;

  /**
   * @param shareTreeWith another fake whose tree (the "server") this client uses, with a
   *   session, connection state and test controls of its own; see {@link newSession}.
   */
  constructor(shareTreeWith?: FakeZkClient) {
    this.nodes = shareTreeWith?.nodes ?? new Map([['/', newNode(Buffer.alloc(0), null)]]);
  }

  /**
   * Another client on the same tree, as a second process on the same ZooKeeper: its own
   * session (its ephemeral nodes vanish when it closes or expires, not the others'), its own
   * connection state and failures. It starts disconnected, like any new client.
   */
  newSession(): FakeZkClient {
    return new FakeZkClient(this);
  }

  /** True while the fake session is connected. */
  get connected(): boolean {
    return this.isConnected;
  }

  /** The "granted" session timeout while connected (set it with {@link grantSessionTimeout}). */
  get negotiatedSessionTimeoutMs(): number | null {
    return this.isConnected ? this.grantedTimeoutMs : null;
  }

  /**
   * Connects at once, unless the fake is unavailable or disconnected: then waits (a real
   * timer, so Jest's fake timers can drive it) for a reconnect.
   * @throws {ZkError} `TIMEOUT` when still not connected after `timeoutMs`; `CLOSED`; or a
   *   code injected with `failNext('connect', code)`.
   */
  async connect(timeoutMs: number): Promise<void> {
    this.check('connect', false);
    this.started = true;
    this.reconnect();
    if (this.isConnected) return;
    await new Promise<void>((resolve, reject) => {
      const waiter = {
        resolve,
        timer: setTimeout(() => {
          this.connectWaiters.delete(waiter);
          reject(new ZkError('TIMEOUT', `FakeZkClient: not connected within ${timeoutMs} ms`));
        }, timeoutMs),
      };
      this.connectWaiters.add(waiter);
    });
    if (this.closed) throw new ZkError('CLOSED', 'connect: FakeZkClient was closed');
  }

  /** Subscribes to state changes; returns the unsubscribe function. */
  onStateChange(listener: (state: ZkConnectionState) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Creates every missing node of `path`. @throws {ZkError} */
  async mkdirp(path: string): Promise<void> {
    this.check('mkdirp');
    const parts = splitPath(path);
    for (let i = 1; i <= parts.length; i++) {
      const node = '/' + parts.slice(0, i).join('/');
      if (!this.nodes.has(node)) this.createNode(node, Buffer.alloc(0), null);
    }
  }

  /** Creates `prefix` + the parent's 10-digit sequence; returns the path. @throws {ZkError} */
  async createPersistentSequential(prefix: string, data: Buffer): Promise<string> {
    this.check('createPersistentSequential');
    if (!prefix.startsWith('/')) throw new ZkError('OTHER', `Invalid ZooKeeper path '${prefix}'`);
    const parent = this.nodes.get(parentOf(prefix));
    if (!parent) throw noNode('createPersistentSequential', prefix);
    const path = prefix + String(parent.createdChildren).padStart(10, '0');
    this.createNode(path, data, null);
    if (this.loseNextCreateResponse) {
      this.loseNextCreateResponse = false;
      throw new ZkError(
        'CONNECTION_LOSS',
        `createPersistentSequential ${prefix}: response lost (FakeZkClient; ${path} was created)`,
      );
    }
    return path;
  }

  /**
   * Creates the ephemeral node `path`, owned by this client's session.
   * @throws {ZkError} `NODE_EXISTS`, `NO_NODE` (parent missing), `OTHER` (parent ephemeral)
   */
  async createEphemeral(path: string, data: Buffer): Promise<void> {
    this.check('createEphemeral');
    this.createNode(path, data, this);
  }

  /**
   * Creates `prefix` + the parent's 10-digit sequence as an ephemeral node of this session.
   * @throws {ZkError} `NO_NODE` (parent missing)
   */
  async createEphemeralSequential(prefix: string, data: Buffer): Promise<string> {
    this.check('createEphemeralSequential');
    const parent = this.nodes.get(parentOf(prefix));
    if (!parent) throw noNode('createEphemeralSequential', prefix);
    const path = prefix + String(parent.createdChildren).padStart(10, '0');
    this.createNode(path, data, this);
    return path;
  }

  /** Child names of `path`. @throws {ZkError} `NO_NODE` */
  async getChildren(path: string): Promise<string[]> {
    this.check('getChildren');
    return [...this.node('getChildren', path).children];
  }

  /** Data (a copy) and version of `path`. @throws {ZkError} `NO_NODE` */
  async getData(path: string): Promise<{ data: Buffer; version: number }> {
    this.check('getData');
    const node = this.node('getData', path);
    return { data: Buffer.from(node.data), version: node.version };
  }

  /** Overwrites `path` (`version` -1 = any). @throws {ZkError} `NO_NODE`, `BAD_VERSION` */
  async setData(path: string, data: Buffer, version = -1): Promise<void> {
    this.check('setData');
    const node = this.node('setData', path);
    checkVersion('setData', path, node, version);
    node.data = Buffer.from(data);
    node.version++;
  }

  /**
   * Deletes `path` (`version` -1 = any).
   * @throws {ZkError} `NO_NODE`, `BAD_VERSION`; `OTHER` for a node with children or the root.
   */
  async delete(path: string, version = -1): Promise<void> {
    this.check('delete');
    const node = this.node('delete', path);
    checkVersion('delete', path, node, version);
    if (path === '/' || node.children.length > 0) {
      throw new ZkError('OTHER', `delete ${path}: not empty or the root (FakeZkClient)`);
    }
    this.removeNode(path);
  }

  /** Closes: later calls reject with `CLOSED`, pending `connect()`s too. No event is emitted. */
  async close(): Promise<void> {
    this.closed = true;
    this.isConnected = false;
    this.dropEphemerals();
    this.listeners.clear();
    for (const waiter of this.connectWaiters) {
      clearTimeout(waiter.timer);
      waiter.resolve(); // connect() re-checks and rejects with CLOSED
    }
    this.connectWaiters.clear();
  }

  // ------------------------------------------------------------------ test controls

  /** Drops the connection: emits `disconnected`; calls fail until {@link simulateReconnect}. */
  simulateDisconnect(): void {
    this.linkDown = true;
    this.disconnect();
  }

  /** Ends a {@link simulateDisconnect}: emits `connected` (same session, nodes kept). */
  simulateReconnect(): void {
    this.linkDown = false;
    this.reconnect();
  }

  /**
   * Deletes every ephemeral node, emits `expired`, then `connected` for the new session
   * (unless the fake is unreachable).
   */
  simulateExpiry(): void {
    if (this.closed || !this.started) return;
    this.isConnected = false;
    this.dropEphemerals();
    try {
      this.emit('expired');
    } finally {
      this.reconnect();
    }
  }

  /**
   * While `true`, every operation rejects with `CONNECTION_LOSS` and `connect()` times out;
   * a connected fake emits `disconnected`. Back to `false`: `connected` again (if it had
   * been asked to connect).
   */
  setUnavailable(unavailable: boolean): void {
    this.unavailable = unavailable;
    if (unavailable) this.disconnect();
    else this.reconnect();
  }

  /** The next call of `op` rejects with `code` (calls queue up, first in first out). */
  failNext(op: FakeZkOperation, code: ZkErrorCode): void {
    const queue = this.failures.get(op) ?? [];
    queue.push(code);
    this.failures.set(op, queue);
  }

  /**
   * The next `createPersistentSequential` creates its node but rejects with
   * `CONNECTION_LOSS`, as when the server applied a create whose answer was lost.
   */
  loseResponseOfNextCreate(): void {
    this.loseNextCreateResponse = true;
  }

  /** The session timeout the fake reports as granted by the server (`null`: none reported). */
  grantSessionTimeout(ms: number | null): void {
    this.grantedTimeoutMs = ms;
  }

  /** Every path in the fake, sorted (for assertions). */
  paths(): string[] {
    return [...this.nodes.keys()].sort();
  }

  // ------------------------------------------------------------------ internals

  private check(op: FakeZkOperation, requireConnected = true): void {
    if (this.closed) throw new ZkError('CLOSED', `${op}: FakeZkClient is closed`);
    const injected = this.failures.get(op)?.shift();
    if (injected) throw new ZkError(injected, `${op}: injected ${injected} (FakeZkClient)`);
    if (requireConnected && !this.isConnected) {
      throw new ZkError('CONNECTION_LOSS', `${op}: FakeZkClient is not connected`);
    }
  }

  private node(op: string, path: string): FakeNode {
    splitPath(path);
    const node = this.nodes.get(path);
    if (!node) throw noNode(op, path);
    return node;
  }

  private createNode(path: string, data: Buffer, ephemeralOwner: FakeZkClient | null): void {
    splitPath(path);
    const parent = this.nodes.get(parentOf(path));
    if (!parent) throw noNode('create', path);
    if (this.nodes.has(path)) throw new ZkError('NODE_EXISTS', `create ${path}: node exists`);
    if (parent.ephemeralOwner) {
      // ZooKeeper's NO_CHILDREN_FOR_EPHEMERALS, which the real adapter reports as OTHER.
      throw new ZkError('OTHER', `create ${path}: ephemeral nodes cannot have children`);
    }
    this.nodes.set(path, newNode(Buffer.from(data), ephemeralOwner));
    parent.children.push(nameOf(path));
    parent.createdChildren++;
  }

  private removeNode(path: string): void {
    this.nodes.delete(path);
    const parent = this.nodes.get(parentOf(path));
    if (parent) parent.children = parent.children.filter((child) => child !== nameOf(path));
  }

  /** Deletes the ephemeral nodes of this client's session (they never have children). */
  private dropEphemerals(): void {
    for (const [path, node] of [...this.nodes]) {
      if (node.ephemeralOwner === this) this.removeNode(path);
    }
  }

  private disconnect(): void {
    if (!this.isConnected) return;
    this.isConnected = false;
    this.emit('disconnected');
  }

  private reconnect(): void {
    if (this.closed || !this.started || this.isConnected || this.linkDown || this.unavailable) {
      return;
    }
    this.isConnected = true;
    for (const waiter of this.connectWaiters) {
      clearTimeout(waiter.timer);
      waiter.resolve();
    }
    this.connectWaiters.clear();
    this.emit('connected');
  }

  /** Runs every listener; the first throw is rethrown afterwards so tests see it. */
  private emit(state: ZkConnectionState): void {
    let failure: { error: unknown } | undefined;
    for (const listener of [...this.listeners]) {
      try {
        listener(state);
      } catch (error) {
        failure ??= { error };
      }
    }
    if (failure) throw failure.error;
  }
}

function newNode(data: Buffer, ephemeralOwner: FakeZkClient | null): FakeNode {
  return { data, version: 0, children: [], createdChildren: 0, ephemeralOwner };
}

function noNode(op: string, path: string): ZkError {
  return new ZkError('NO_NODE', `${op} ${path}: no node`);
}

function checkVersion(op: string, path: string, node: FakeNode, version: number): void {
  if (version !== -1 && version !== node.version) {
    throw new ZkError('BAD_VERSION', `${op} ${path}: version ${version}, node has ${node.version}`);
  }
}

/** Components of an absolute path (`/` → none). @throws {ZkError} `OTHER` when malformed. */
function splitPath(path: string): string[] {
  if (path === '/') return [];
  const parts = path.split('/').slice(1);
  if (!path.startsWith('/') || parts.some((part) => part === '')) {
    throw new ZkError('OTHER', `Invalid ZooKeeper path '${path}'`);
  }
  return parts;
}

function parentOf(path: string): string {
  const slash = path.lastIndexOf('/');
  return slash === 0 ? '/' : path.slice(0, slash);
}

function nameOf(path: string): string {
  return path.slice(path.lastIndexOf('/') + 1);
}
