import { LostSessionWatch } from './lost-session.watch';
import { SessionWaiters } from './session-waiters';
import { messageOf } from '../../core/errors/leaf.error';
import { ZkClient, ZkConnectionState, ZkError } from '../../core/zookeeper/zk-client.port';
import {
  EMPTY,
  newNativeHandle,
  toBuffer,
  toZkError,
  Z,
  type NativeHandle,
} from './zookeeper.native';

/** Options of {@link ZookeeperClient}. */
export interface ZookeeperClientOptions {
  /** Connect string: `host:port[,host:port...][/chroot]`. */
  connect: string;
  /**
   * Requested session timeout. The server clamps it into its
   * `[minSessionTimeout, maxSessionTimeout]` (by default 2 to 20 ticks).
   */
  sessionTimeoutMs: number;
  /** Receives one line per connection-state change and per problem. @default no logging */
  logger?: (message: string) => void;
}

/** Back-off between attempts to open a replacement session. */
const REOPEN_BASE_DELAY_MS = 100;
const REOPEN_MAX_DELAY_MS = 5_000;

/**
 * {@link ZkClient} over the `zookeeper` package (the ZooKeeper C client in single-threaded
 * mode, driven by Node's event loop).
 *
 * - A lost connection is reported as `disconnected`; the C client reconnects by itself and
 *   `connected` follows if the session is still alive. Calls made meanwhile are queued by the
 *   C client: they complete after a quick reconnect, or reject with `CONNECTION_LOSS` when its
 *   next connection attempt fails (a few seconds at most, bounded by the session timeout).
 * - An expired session cannot be revived by the C client: the adapter reports `expired`,
 *   discards the handle and opens a new session (with back-off), then reports `connected`.
 * - A connection lost for longer than the session timeout is treated the same way: ZooKeeper
 *   has expired the session by then, or no longer knows it (a server that lost its data or
 *   was restored from an older snapshot refuses a client that has seen newer transactions,
 *   and the C client would retry it forever). So is a server that answers throwaway sessions
 *   (opened every quarter timeout, 1–3 s, while disconnected) twice in a row while the real one
 *   stays away. The adapter opens a new session and reports `expired` when it connects, just
 *   before `connected`, as for an expiry the server reports.
 *   Calls made before `connect()` or while no handle exists reject with `CONNECTION_LOSS`.
 * - While a session handle exists, its socket and timer keep the process alive (the package
 *   gives no way to unref them); {@link close} releases them.
 */
export class ZookeeperClient implements ZkClient {
  private handle: NativeHandle | undefined;
  /** Bumped whenever a handle is dropped, so late events of old handles are ignored. */
  private generation = 0;
  private isConnected = false;
  private closed = false;
  private reopenTimer: NodeJS.Timeout | undefined;
  private reopenAttempts = 0;
  private connectedAt = 0;
  /** The session timeout granted to the current session (ms), for {@link onConnectionLost}. */
  private grantedTimeoutMs = 0;
  /** Gives the session up once it is surely lost (see the class comment). */
  private readonly lostWatch: LostSessionWatch;
  /** The session was given up ({@link onConnectionLost}): `expired` is reported with the next one. */
  private abandoned = false;
  private readonly listeners = new Set<(state: ZkConnectionState) => void>();
  private readonly waiters = new SessionWaiters();
  private readonly log: (message: string) => void;

  constructor(private readonly options: ZookeeperClientOptions) {
    this.log = options.logger ?? (() => undefined);
    this.lostWatch = new LostSessionWatch(options, (why) => this.giveUp(why));
  }

  /** True while a session is connected. */
  get connected(): boolean {
    return this.isConnected;
  }

  /** The server's granted session timeout while connected, else `null`. */
  get negotiatedSessionTimeoutMs(): number | null {
    const timeout = this.isConnected ? this.handle?.timeout : undefined;
    return timeout !== undefined && timeout > 0 ? timeout : null;
  }

  /**
   * Opens the session (once; later calls wait for the same one). After a timeout the client
   * keeps trying in the background until {@link close}.
   * @throws {ZkError} `TIMEOUT` when not connected within `timeoutMs`; `CLOSED` after `close()`.
   */
  connect(timeoutMs: number): Promise<void> {
    if (this.closed) return Promise.reject(this.closedError('connect'));
    if (this.isConnected) return Promise.resolve();
    if (!this.handle && !this.reopenTimer) this.openSession();
    return this.waiters.wait(
      timeoutMs,
      () =>
        new ZkError(
          'TIMEOUT',
          `No ZooKeeper session with ${this.options.connect} within ${timeoutMs} ms`,
        ),
    );
  }

  /**
   * Subscribes to state changes; returns the unsubscribe function. Listeners run inside the
   * native callback: a throw is caught and logged. Nothing is reported after {@link close}.
   */
  onStateChange(listener: (state: ZkConnectionState) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Creates every missing node of `path`, one component at a time (persistent, empty data).
   * @throws {ZkError}
   */
  async mkdirp(path: string): Promise<void> {
    for (const node of ancestorsAndSelf(path)) {
      try {
        await this.create(node, EMPTY, Z.ZOO_PERSISTENT);
      } catch (error) {
        if (!(error instanceof ZkError && error.zkCode === 'NODE_EXISTS')) throw error;
      }
    }
  }

  /**
   * Creates a persistent sequential node; returns its path (`prefix` + 10-digit sequence).
   * @throws {ZkError} `CONNECTION_LOSS` leaves it unknown whether the node was created.
   */
  createPersistentSequential(prefix: string, data: Buffer): Promise<string> {
    return this.create(prefix, data, Z.ZOO_PERSISTENT_SEQUENTIAL);
  }

  /**
   * Creates an ephemeral node, owned by the current session.
   * @throws {ZkError} `NODE_EXISTS`, `NO_NODE` (parent missing); `CONNECTION_LOSS` leaves it
   *   unknown whether the node was created.
   */
  async createEphemeral(path: string, data: Buffer): Promise<void> {
    await this.create(path, data, Z.ZOO_EPHEMERAL);
  }

  /**
   * Creates an ephemeral sequential node; returns its path (`prefix` + 10-digit sequence).
   * @throws {ZkError} `CONNECTION_LOSS` leaves it unknown whether the node was created.
   */
  createEphemeralSequential(prefix: string, data: Buffer): Promise<string> {
    return this.create(prefix, data, Z.ZOO_EPHEMERAL_SEQUENTIAL);
  }

  /** Child names of `path`. @throws {ZkError} `NO_NODE` */
  getChildren(path: string): Promise<string[]> {
    return this.call('getChildren', path, (handle) => handle.get_children(path, false));
  }

  /** Data and version of `path`. @throws {ZkError} `NO_NODE` */
  getData(path: string): Promise<{ data: Buffer; version: number }> {
    return this.call('getData', path, async (handle) => {
      const [stat, data] = await handle.get(path, false);
      return { data: toBuffer(data), version: stat.version };
    });
  }

  /** Overwrites the data of `path` (`version` -1 = any). @throws {ZkError} `NO_NODE`, `BAD_VERSION` */
  async setData(path: string, data: Buffer, version = -1): Promise<void> {
    await this.call('setData', path, (handle) => handle.set(path, data, version));
  }

  /** Deletes `path` (`version` -1 = any). @throws {ZkError} `NO_NODE`, `BAD_VERSION` */
  async delete(path: string, version = -1): Promise<void> {
    await this.call('delete', path, (handle) => handle.delete_(path, version));
  }

  /**
   * Closes the session, stops reconnecting and rejects pending `connect()` calls with `CLOSED`.
   * Never throws. The C client closes synchronously; with a connected but unresponsive server
   * it may block for up to about 1.5 s waiting for the server to confirm.
   */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.isConnected = false;
    clearTimeout(this.reopenTimer);
    this.reopenTimer = undefined;
    this.listeners.clear();
    this.waiters.rejectAll(this.closedError('connect'));
    this.dropHandle();
  }

  private openSession(): void {
    const generation = ++this.generation;
    const handle = newNativeHandle(this.options.connect, this.options.sessionTimeoutMs);
    const guarded =
      (action: (...args: unknown[]) => void) =>
      (...args: unknown[]): void => {
        // Events run inside the native callback: a throw here would surface as an uncaught
        // exception.
        if (generation !== this.generation || this.closed) return;
        try {
          action(...args);
        } catch (error) {
          this.log(`ZooKeeper: event handling failed: ${messageOf(error)}`);
        }
      };
    let hadSession = false;
    handle.on(
      'connect',
      guarded(() => {
        hadSession = true;
        this.onConnected(handle);
      }),
    );
    handle.on(
      'connecting',
      guarded(() => this.onConnectionLost()),
    );
    handle.on(
      'close',
      guarded((_self, code) => this.onHandleClosed(code, hadSession)),
    );
    this.handle = handle;
    try {
      handle.init({});
    } catch (error) {
      this.log(`ZooKeeper: cannot open a session to ${this.options.connect}: ${messageOf(error)}`);
    }
    // The package ignores zookeeper_init failures (e.g. an unresolvable host); the handle then
    // reports no session timeout and would never emit anything.
    if (this.handle === handle && handle.timeout === -1) {
      this.log(`ZooKeeper: cannot open a session to ${this.options.connect}; will retry`);
      this.dropHandle();
      this.scheduleReopen();
    }
  }

  private onConnected(handle: NativeHandle): void {
    if (this.isConnected) return;
    this.isConnected = true;
    this.connectedAt = Date.now();
    this.lostWatch.stop();
    if (handle.timeout > 0) this.grantedTimeoutMs = handle.timeout;
    this.log(
      `ZooKeeper: connected to ${this.options.connect}, session 0x${handle.client_id}, ` +
        `timeout ${handle.timeout} ms`,
    );
    this.waiters.resolveAll();
    if (this.abandoned) {
      // Reported when contact resumes, as the server reports an expiry: until then the
      // session's holders keep the rules of a session that may still live.
      this.abandoned = false;
      this.emit('expired');
    }
    this.emit('connected');
  }

  private onConnectionLost(): void {
    if (!this.isConnected) return;
    this.isConnected = false;
    this.log('ZooKeeper: connection lost; reconnecting');
    this.emit('disconnected');
    this.lostWatch.start(this.grantedTimeoutMs || this.options.sessionTimeoutMs);
  }

  /** Drops the current session for a new one; `expired` is reported when that one connects. */
  private giveUp(why: string): void {
    if (this.closed || this.isConnected) return;
    this.log(`ZooKeeper: ${why}; opening a new session`);
    this.dropHandle();
    this.abandoned = true;
    this.reopenAttempts = 0;
    this.scheduleReopen();
  }

  /** The C handle closed itself: session expired, authentication failed, or the package's
   * own watchdog gave up on an unresponsive server. The handle is unusable. */
  private onHandleClosed(code: unknown, hadSession: boolean): void {
    this.isConnected = false;
    this.dropHandle();
    // A session that lived through one timeout resets the back-off; one that dies at once
    // (or never comes up) makes the next attempt wait longer, so this cannot spin.
    if (hadSession && Date.now() - this.connectedAt >= this.options.sessionTimeoutMs) {
      this.reopenAttempts = 0;
    }
    const delay = this.scheduleReopen();
    this.log(
      `ZooKeeper: session ${hadSession ? 'expired' : 'could not be established'} ` +
        `(native code ${String(code)}); opening a new session in ${delay} ms`,
    );
    if (hadSession) this.emit('expired');
  }

  private scheduleReopen(): number {
    const delay = Math.min(REOPEN_MAX_DELAY_MS, REOPEN_BASE_DELAY_MS * 2 ** this.reopenAttempts);
    this.reopenAttempts = Math.min(this.reopenAttempts + 1, 16);
    if (this.closed || this.reopenTimer) return delay;
    this.reopenTimer = setTimeout(() => {
      this.reopenTimer = undefined;
      if (this.closed) return;
      try {
        this.openSession();
      } catch (error) {
        this.log(`ZooKeeper: cannot open a session: ${messageOf(error)}`);
        this.scheduleReopen();
      }
    }, delay);
    return delay;
  }

  private dropHandle(): void {
    // A dropped session (given up, expired, closed) is no longer watched.
    this.lostWatch.stop();
    const handle = this.handle;
    this.handle = undefined;
    this.generation++;
    if (!handle) return;
    try {
      handle.close(); // a no-op when the C handle already closed itself
    } catch (error) {
      this.log(`ZooKeeper: close failed: ${messageOf(error)}`);
    }
  }

  private emit(state: ZkConnectionState): void {
    for (const listener of [...this.listeners]) {
      try {
        listener(state);
      } catch (error) {
        this.log(`ZooKeeper: a '${state}' listener threw: ${messageOf(error)}`);
      }
    }
  }

  private create(path: string, data: Buffer, flags: number): Promise<string> {
    return this.call('create', path, (handle) => handle.create(path, data, flags));
  }

  private async call<T>(
    op: string,
    path: string,
    action: (handle: NativeHandle) => Promise<T>,
  ): Promise<T> {
    if (this.closed) throw this.closedError(`${op} ${path}`);
    const handle = this.handle;
    if (!handle) {
      throw new ZkError('CONNECTION_LOSS', `${op} ${path}: no ZooKeeper session at the moment`);
    }
    try {
      return await action(handle);
    } catch (error) {
      throw toZkError(error, op, path, this.closed);
    }
  }

  private closedError(what: string): ZkError {
    return new ZkError('CLOSED', `${what}: the ZooKeeper client is closed`);
  }
}

/** `/a/b/c` → `/a`, `/a/b`, `/a/b/c`. */
function ancestorsAndSelf(path: string): string[] {
  if (path === '/') return [];
  const parts = path.split('/');
  if (parts[0] !== '' || parts.slice(1).some((part) => part === '')) {
    throw new ZkError('OTHER', `Invalid ZooKeeper path '${path}'`);
  }
  return parts.slice(1).map((_, i) => '/' + parts.slice(1, i + 2).join('/'));
}
