import { randomBytes } from 'node:crypto';
import type { Clock } from '../clock';
import { isZkError, unlessNoNode, ZkError, type ZkClient } from '../zookeeper/zk-client.port';
import type { SnowflakeLogger } from './snowflake-logger';
import { childrenOf } from './worker-listing';
import {
  decodeWorkerNodeData,
  encodeWorkerNodeData,
  parseWorkerNodeName,
  workerNodeParent,
  workerNodesOf,
  type WorkerNodeData,
  type WorkerNodeName,
} from './worker-node';

/** The node this instance's worker ID comes from. */
export interface WorkerRegistration {
  /** Full path of the node. */
  readonly path: string;
  /** Its sequence number: the worker ID (when below 1024). */
  readonly sequence: number;
  /** True when this registration created the node (no earlier run of this identity). */
  readonly created: boolean;
  /** The node's data as found (or as created). */
  readonly data: WorkerNodeData;
}

/** What one lease write records in the worker node. */
export interface WorkerLeaseRecord {
  /** Local time of the write. */
  readonly timestamp: number;
  /** The lease bound. */
  readonly reservedUntil: number;
  /** See {@link WorkerNodeData.horizon}. */
  readonly horizon: number;
  /** The writer's run id. */
  readonly run: string;
}

/** How many times a create whose answer was lost is retried before start-up gives up. */
const MAX_CREATE_ATTEMPTS = 3;

/**
 * Worker IDs through ZooKeeper, as Leaf assigns them: one persistent sequential node per
 * `ip:port` under `/snowflake/{name}/forever`, named `{ip}:{port}-{10-digit sequence}`;
 * the sequence is the worker ID.
 *
 * Lost create answers: after `CONNECTION_LOSS` the create may or may not have been applied.
 * The registry lists the children again and adopts a node of this identity if there is one
 * (its data carries this attempt's random `registration` nonce, so it is recognised as ours). A read served by a
 * server that has not applied the create yet can miss it, and the retry then creates a
 * second node; so after every create the children are listed again, the lowest node of the
 * identity is adopted, and the other nodes this registration created are deleted. That is
 * safe: none of them has issued an ID (registration is not finished) and ZooKeeper never
 * hands out a sequence number twice. Nodes of this identity that we did not create are
 * never deleted; the lowest one wins, deterministically, on every start.
 */
export class ZookeeperWorkerRegistry {
  /** `/snowflake/{name}/forever`. */
  readonly parent: string;
  /** `ip:port`. */
  readonly identity: string;

  constructor(
    protected readonly zk: ZkClient,
    name: string,
    /** Advertised IP (or host name). */
    readonly ip: string,
    /** Advertised port. */
    readonly port: number,
    protected readonly clock: Clock,
    private readonly logger: SnowflakeLogger,
  ) {
    this.parent = workerNodeParent(name);
    this.identity = `${ip}:${port}`;
  }

  /**
   * Finds this identity's node or creates one, and reads its data. Creates the parent path
   * if missing.
   * @throws {ZkError} when ZooKeeper fails (transport errors: the caller may fall back to the local cache).
   * @throws {WorkerStateCorruptError} when the adopted node's data is unreadable.
   */
  async register(): Promise<WorkerRegistration> {
    await this.zk.mkdirp(this.parent);
    const now = this.clock.now();
    // The nonce makes the creation data unique to this attempt, so a node whose create
    // answer was lost is recognised as ours; the first lease write replaces the data.
    const createData = encodeWorkerNodeData({
      ip: this.ip,
      port: this.port,
      timestamp: now,
      reservedUntil: now,
      registration: randomBytes(8).toString('hex'),
    });
    for (let attempt = 1; ; attempt++) {
      try {
        const existing = await this.ownNodes();
        if (existing.length > 0) return await this.adopt(existing, createData);
        const createdPath = await this.zk.createPersistentSequential(
          `${this.parent}/${this.identity}-`,
          createData,
        );
        const created = parseWorkerNodeName(createdPath.slice(createdPath.lastIndexOf('/') + 1));
        if (!created)
          throw new ZkError('OTHER', `ZooKeeper created an unexpected node name: ${createdPath}`);
        const after = await this.ownNodes();
        if (!after.some((node) => node.child === created.child)) after.push(created);
        return await this.adopt(
          after.sort((a, b) => a.sequence - b.sequence),
          createData,
        );
      } catch (error) {
        if (!isZkError(error, 'CONNECTION_LOSS') || attempt >= MAX_CREATE_ATTEMPTS) throw error;
        this.logger.warn(
          `ZooKeeper connection lost while registering ${this.identity} (attempt ${attempt}); listing ${this.parent} again before any new create`,
        );
      }
    }
  }

  /**
   * This identity's node (the lowest if there are several), or `null` when there is none.
   * @throws {ZkError}
   */
  async find(): Promise<{ path: string; sequence: number } | null> {
    const [lowest] = await this.ownNodes();
    return lowest ? { path: this.pathOf(lowest), sequence: lowest.sequence } : null;
  }

  /**
   * `path` as this identity's node with worker ID `sequence`, if its data names this
   * identity as holder (a node it reclaimed); `null` when gone or held by another.
   * @throws {ZkError} other than `NO_NODE`; {@link WorkerStateCorruptError}
   */
  async heldAt(path: string, sequence: number): Promise<{ path: string; sequence: number } | null> {
    const data = await unlessNoNode(this.read(path));
    return data && `${data.ip}:${data.port}` === this.identity ? { path, sequence } : null;
  }

  /**
   * The decoded data of `path`.
   * @throws {ZkError} `NO_NODE` when it is gone.
   * @throws {WorkerStateCorruptError} when the data is not a worker node's.
   */
  async read(path: string): Promise<WorkerNodeData> {
    return (await this.readVersioned(path)).data;
  }

  /** The decoded data of `path` and its version. @throws as {@link read}. */
  async readVersioned(path: string): Promise<{ data: WorkerNodeData; version: number }> {
    const { data, version } = await this.zk.getData(path);
    return { data: decodeWorkerNodeData(path, data), version };
  }

  /**
   * Overwrites the node's data with `{ ip, port, timestamp, reservedUntil, horizon, run }`,
   * only if its version is still `version` (-1: any).
   * @throws {ZkError} `BAD_VERSION` when someone else wrote it meanwhile.
   */
  async write(path: string, record: WorkerLeaseRecord, version = -1): Promise<void> {
    await this.zk.setData(
      path,
      encodeWorkerNodeData({ ip: this.ip, port: this.port, ...record }),
      version,
    );
  }

  /**
   * Deletes the node a registration just created when its sequence is of no use (beyond
   * the last worker ID): it never issued an ID. Best effort: never throws.
   */
  async discard(registration: WorkerRegistration): Promise<void> {
    if (!registration.created) return;
    await this.zk.delete(registration.path).catch((error: unknown) => {
      this.logger.warn(
        `Could not delete unused worker node ${registration.path}: ${String(error)}`,
      );
    });
  }

  /**
   * The nodes named for this identity that it still holds, lowest first: a node another
   * identity reclaimed (its data records that identity) belongs to that one now.
   */
  private async ownNodes(): Promise<WorkerNodeName[]> {
    const held: WorkerNodeName[] = [];
    for (const node of workerNodesOf(await childrenOf(this.zk, this.parent), this.identity)) {
      try {
        const { ip, port } = await this.read(this.pathOf(node));
        if (`${ip}:${port}` === this.identity) held.push(node);
        else
          this.logger.warn(
            `Worker node ${this.pathOf(node)} was reclaimed by ${ip}:${port}; ${this.identity} registers another worker ID`,
          );
      } catch (error) {
        if (isZkError(error, 'NO_NODE')) continue;
        // Unreadable data: keep it, so adopting it reports the problem as before.
        if (error instanceof ZkError) throw error;
        held.push(node);
      }
    }
    return held;
  }

  private pathOf(node: WorkerNodeName): string {
    return `${this.parent}/${node.child}`;
  }

  /** Adopts the lowest of `nodes` (sorted) and removes the other nodes this registration created. */
  private async adopt(nodes: WorkerNodeName[], createData: Buffer): Promise<WorkerRegistration> {
    const [chosen, ...others] = nodes;
    const path = this.pathOf(chosen!);
    const { data: raw } = await this.zk.getData(path);
    const registration: WorkerRegistration = {
      path,
      sequence: chosen!.sequence,
      created: raw.equals(createData),
      data: decodeWorkerNodeData(path, raw),
    };
    for (const other of others) {
      const otherPath = this.pathOf(other);
      const otherNode = await unlessNoNode(this.zk.getData(otherPath));
      if (otherNode === null) continue;
      if (otherNode.data.equals(createData)) {
        await this.zk.delete(otherPath).catch((error: unknown) => {
          this.logger.warn(`Could not delete duplicate worker node ${otherPath}: ${String(error)}`);
        });
        this.logger.warn(
          `Deleted duplicate worker node ${otherPath} left by a retried create; using ${path}`,
        );
      } else {
        this.logger.warn(
          `Several worker nodes exist for ${this.identity}; using the lowest, ${path}, and ignoring ${otherPath}`,
        );
      }
    }
    return registration;
  }
}

/**
 * The worker node of a StatefulSet ordinal: `/snowflake/{name}/ordinal/{workerId}`, with the
 * same data as a sequential worker node (lease, horizon, run), so the same start-up bound,
 * lease writes and fencing apply. The worker ID is the ordinal, not a sequence; the identity
 * written is `{hostname}:0`.
 */
export class OrdinalWorkerRegistry extends ZookeeperWorkerRegistry {
  private readonly path: string;

  constructor(
    zk: ZkClient,
    name: string,
    hostname: string,
    private readonly workerId: number,
    clock: Clock,
    logger: SnowflakeLogger,
  ) {
    super(zk, name, hostname, 0, clock, logger);
    this.path = `/snowflake/${name}/ordinal/${workerId}`;
  }

  /**
   * The ordinal's node, created (empty by `mkdirp`, then its first data written conditionally
   * on version 0) when missing. `created` only for the run whose write filled the empty node.
   */
  override async register(): Promise<WorkerRegistration> {
    const registration = (created: boolean, data: WorkerNodeData) => ({
      path: this.path,
      sequence: this.workerId,
      created,
      data,
    });
    await this.zk.mkdirp(this.path);
    const { data, version } = await this.zk.getData(this.path);
    if (data.length > 0) return registration(false, decodeWorkerNodeData(this.path, data));
    const now = this.clock.now();
    const first: WorkerNodeData = {
      ip: this.ip,
      port: this.port,
      timestamp: now,
      reservedUntil: now,
    };
    try {
      await this.zk.setData(this.path, encodeWorkerNodeData(first), version);
      return registration(true, first);
    } catch (error) {
      // Another pod filled it first: read what it wrote.
      if (!isZkError(error, 'BAD_VERSION')) throw error;
      return registration(false, await this.read(this.path));
    }
  }

  override async find(): Promise<{ path: string; sequence: number } | null> {
    const node = await unlessNoNode(this.zk.getData(this.path));
    return node && { path: this.path, sequence: this.workerId };
  }
}
