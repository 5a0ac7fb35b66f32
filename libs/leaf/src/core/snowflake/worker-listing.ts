import { unlessNoNode, ZkError, type ZkClient } from '../zookeeper/zk-client.port';
import { workerAliveParent } from './worker-alive.node';
import {
  decodeWorkerNodeData,
  parseWorkerNodeName,
  workerNodeParent,
  type WorkerNodeData,
} from './worker-node';
import type { WorkerLeaseRow } from './worker-lease-store.port';
import { messageOf } from '../errors/leaf.error';

/** Who holds a liveness node: its data `{identity, pid, startedAt, run}`. */
export interface WorkerAliveHolder {
  readonly identity: string | null;
  readonly pid: number | null;
  readonly startedAt: number | null;
  readonly run: string | null;
}

/** One snowflake worker of a namespace, as ZooKeeper records it (read-only view for operators). */
export interface SnowflakeWorkerInfo {
  /** The worker ID: the node's sequence. */
  readonly workerId: number;
  /** `ip:port` the node was created for (its name). */
  readonly identity: string;
  /**
   * `ip:port` of its current (or last) holder, from its data: differs from `identity` once
   * another instance reclaimed it; `null` when the data is unreadable.
   */
  readonly holder: string | null;
  /** Full path of the worker node. */
  readonly path: string;
  /** Time of the last write (Leaf's `timestamp`), or `null` when the data is unreadable. */
  readonly lastWrite: number | null;
  /** The time lease; `null` for nodes of the Java Leaf or unreadable data. */
  readonly reservedUntil: number | null;
  /** How far the last writer may issue without writing the node again; `null` when absent. */
  readonly horizon: number | null;
  /** The run that wrote the node last. */
  readonly run: string | null;
  /** True while `/snowflake/{name}/alive/{workerId}` exists (a live process holds the ID). */
  readonly alive: boolean;
  /** The liveness node's data, when it exists and is readable. */
  readonly aliveHolder: WorkerAliveHolder | null;
  /** Why the node data could not be read, if it could not. */
  readonly error: string | null;
}

/** Child names of `path`; none when it does not exist. @throws {ZkError} other failures */
export async function childrenOf(zk: ZkClient, path: string): Promise<string[]> {
  return (await unlessNoNode(zk.getChildren(path))) ?? [];
}

/** A liveness node's data as its holder, or `null` when unreadable. */
export function aliveHolderOf(data: string | null): WorkerAliveHolder | null {
  try {
    const raw = JSON.parse(data ?? '') as Record<string, unknown>;
    const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : null);
    const str = (v: unknown) => (typeof v === 'string' ? v : null);
    return {
      identity: str(raw.identity),
      pid: num(raw.pid),
      startedAt: num(raw.startedAt),
      run: str(raw.run),
    };
  } catch {
    return null;
  }
}

/**
 * Every worker node of namespace `name` with its lease state and whether its liveness node
 * exists, ordered by worker ID. Reads only; a namespace that does not exist has no workers.
 * @throws {ZkError} when ZooKeeper fails (connection lost, ...).
 */
export async function listSnowflakeWorkers(
  zk: ZkClient,
  name: string,
): Promise<SnowflakeWorkerInfo[]> {
  const parent = workerNodeParent(name);
  const aliveParent = workerAliveParent(name);
  const [children, aliveChildren] = await Promise.all([
    childrenOf(zk, parent),
    childrenOf(zk, aliveParent),
  ]);
  const alive = new Set(aliveChildren);
  const nodes = children
    .map(parseWorkerNodeName)
    .filter((node): node is NonNullable<typeof node> => node !== null)
    .sort((x, y) => x.sequence - y.sequence);
  return Promise.all(
    nodes.map(async (node): Promise<SnowflakeWorkerInfo> => {
      const path = `${parent}/${node.child}`;
      const isAlive = alive.has(String(node.sequence));
      const aliveHolder = isAlive
        ? await zk
            .getData(`${aliveParent}/${node.sequence}`)
            .then(({ data }) => aliveHolderOf(data.toString('utf8')))
            .catch(() => null)
        : null;
      let data: WorkerNodeData | null = null;
      let error: string | null = null;
      try {
        data = decodeWorkerNodeData(path, (await zk.getData(path)).data);
      } catch (failure) {
        if (failure instanceof ZkError && failure.zkCode !== 'NO_NODE') throw failure;
        error = messageOf(failure);
      }
      return {
        workerId: node.sequence,
        identity: node.identity,
        path,
        alive: isAlive,
        aliveHolder,
        holder: data && `${data.ip}:${data.port}`,
        lastWrite: data?.timestamp ?? null,
        reservedUntil: data?.reservedUntil ?? null,
        horizon: data?.horizon ?? null,
        run: data?.run ?? null,
        error,
      };
    }),
  );
}

/**
 * A row of `leaf_worker_lease` as a {@link SnowflakeWorkerInfo}: `alive` while its expiry is
 * ahead of `now` (this host's clock standing in for the database's), `reservedUntil` and
 * `horizon` both the row's horizon.
 */
export function leaseRowWorkerInfo(
  row: WorkerLeaseRow,
  name: string,
  now: number,
): SnowflakeWorkerInfo {
  return {
    workerId: row.workerId,
    identity: row.holder,
    holder: row.holder,
    path: `leaf_worker_lease/${name}/${row.workerId}`,
    lastWrite: null,
    reservedUntil: row.horizon,
    horizon: row.horizon,
    run: row.run,
    alive: row.expiresAt > now,
    aliveHolder: null,
    error: null,
  };
}
