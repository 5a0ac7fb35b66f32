import type { Clock } from '../clock';
import { withTimeout } from '../with-timeout';
import { WorkerIdInUseError } from '../errors/worker-id-in-use.error';
import { isZkError, unlessNoNode, type ZkClient } from '../zookeeper/zk-client.port';
import type { SnowflakeLogger } from './snowflake-logger';
import { zkWithin } from './zk-worker.binding';

/** `/snowflake/{name}/alive`: the parent of the liveness nodes of one namespace. */
export function workerAliveParent(name: string): string {
  return `/snowflake/${name}/alive`;
}

/** Result of {@link WorkerAliveNode.acquire}. */
export type WorkerAliveAcquire =
  | { readonly acquired: true }
  /** Another session holds the node; `holder` is its data (or `null` when unreadable). */
  | { readonly acquired: false; readonly holder: string | null };

/**
 * A liveness node found at start may be the one of this instance's crashed previous run:
 * ZooKeeper deletes it once that session times out. Start-up waits `sessionTimeoutMs` plus
 * this margin (ZooKeeper checks expiry once per tick) before it concludes that another live
 * process holds the worker ID.
 */
const ALIVE_WAIT_MARGIN_MS = 2000;
/** Pause between attempts to create the liveness node while another session holds it. */
const ALIVE_RETRY_MS = 500;

/** How many times a node that vanished between `NODE_EXISTS` and the read is tried again. */
const MAX_ATTEMPTS = 3;

/**
 * The liveness guard of one worker: the ephemeral node `/snowflake/{name}/alive/{workerId}`,
 * data JSON `{ identity, pid, startedAt, nonce }`. It exists while the session of the
 * process that runs the worker ID lives, so a second live process advertising the same
 * `ip:port` (and so reusing the same worker node) finds it and refuses to start.
 *
 * The `run` id makes the data unique to this worker: after a create whose answer was
 * lost, finding our own data means the node is ours.
 */
export class WorkerAliveNode {
  /** Full path of the node. */
  readonly path: string;
  private readonly parent: string;
  private readonly data: Buffer;

  constructor(
    private readonly zk: ZkClient,
    name: string,
    /** The worker ID guarded. */
    readonly workerId: number,
    /** The `ip:port` identity of this instance. */
    readonly identity: string,
    startedAt: number,
    /** This run's random id. */
    run: string,
  ) {
    this.parent = workerAliveParent(name);
    this.path = `${this.parent}/${workerId}`;
    this.data = Buffer.from(JSON.stringify({ identity, pid: process.pid, startedAt, run }), 'utf8');
  }

  /**
   * Creates the node for the current session (and its parent if missing), or adopts it if
   * it already carries our data.
   * @throws {ZkError} other than `NODE_EXISTS` (transport failures).
   */
  async acquire(): Promise<WorkerAliveAcquire> {
    let holder: string | null = null;
    for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
      try {
        await this.create();
        return { acquired: true };
      } catch (error) {
        if (!isZkError(error, 'NODE_EXISTS')) throw error;
      }
      const current = await unlessNoNode(this.zk.getData(this.path));
      if (current === null) continue; // the holder's session just ended: try again
      if (current.data.equals(this.data)) return { acquired: true };
      holder = current.data.toString('utf8');
    }
    return { acquired: false, holder };
  }

  /**
   * Whether the node exists with our data, i.e. the session that created it is still this
   * client's session (ephemeral nodes end with their session).
   * @throws {ZkError} when ZooKeeper fails.
   */
  async held(): Promise<boolean> {
    return (await unlessNoNode(this.zk.getData(this.path)))?.data.equals(this.data) ?? false;
  }

  /** Deletes the node if it is ours. Best effort: never throws. */
  async release(): Promise<void> {
    try {
      const { data, version } = await this.zk.getData(this.path);
      if (data.equals(this.data)) await this.zk.delete(this.path, version);
    } catch {
      // Gone already, or ZooKeeper unreachable: the node ends with the session anyway.
    }
  }

  /**
   * Creates the node at start, waiting up to `sessionTimeoutMs` + a margin while another
   * session holds it (a crashed previous run's node disappears within that time). Each
   * attempt is bounded by `stepTimeoutMs`.
   * @returns whether it had to wait.
   * @throws {WorkerIdInUseError} when the node is still held after the wait.
   * @throws {ZkError} when ZooKeeper fails.
   */
  async acquireAtStart(
    sessionTimeoutMs: number,
    stepTimeoutMs: number,
    clock: Clock,
    logger: SnowflakeLogger,
  ): Promise<boolean> {
    const maxWaitMs = sessionTimeoutMs + ALIVE_WAIT_MARGIN_MS;
    let waitedMs = 0;
    for (;;) {
      const result = await zkWithin(this.acquire(), stepTimeoutMs, `creating ${this.path}`);
      if (result.acquired) {
        if (waitedMs > 0)
          logger.log(
            `Liveness node ${this.path} was released after ${waitedMs} ms; worker ID ${this.workerId} is free`,
          );
        return waitedMs > 0;
      }
      if (waitedMs >= maxWaitMs) {
        throw new WorkerIdInUseError(
          this.workerId,
          this.identity,
          this.path,
          result.holder,
          waitedMs,
        );
      }
      if (waitedMs === 0) {
        logger.warn(
          `Worker ID ${this.workerId} for ${this.identity} is held by another ZooKeeper session (${this.path}${result.holder ? `: ${result.holder}` : ''}); ` +
            `waiting up to ${maxWaitMs} ms in case it is this instance's crashed previous run`,
        );
      }
      const pause = Math.min(ALIVE_RETRY_MS, maxWaitMs - waitedMs);
      await clock.sleep(pause);
      waitedMs += pause;
    }
  }

  /** {@link release}, skipped while disconnected and bounded by `timeoutMs`. Never throws. */
  async releaseWithin(timeoutMs: number): Promise<void> {
    if (!this.zk.connected) return;
    await withTimeout(this.release(), timeoutMs);
  }

  private async create(): Promise<void> {
    try {
      await this.zk.createEphemeral(this.path, this.data);
    } catch (error) {
      if (!isZkError(error, 'NO_NODE')) throw error;
      await this.zk.mkdirp(this.parent);
      await this.zk.createEphemeral(this.path, this.data);
    }
  }
}
