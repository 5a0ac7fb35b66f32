import { randomBytes } from 'node:crypto';
import { isZkError, unlessNoNode, ZkError, type ZkClient } from '../zookeeper/zk-client.port';
import { snowflakeLayoutOf } from './snowflake-settings';
import { nodeLeaseOf } from './startup-bound';
import { WorkerAliveNode, workerAliveParent } from './worker-alive.node';
import { childrenOf } from './worker-listing';
import {
  decodeWorkerNodeData,
  encodeWorkerNodeData,
  parseWorkerNodeName,
  type WorkerNodeData,
} from './worker-node';
import type { StartContext } from './worker-start.plan';
import type { WorkerRegistration, ZookeeperWorkerRegistry } from './zookeeper-worker.registry';

/** What {@link reclaimWorkerId} needs besides the start's context. */
export interface WorkerReclaimInput extends StartContext {
  readonly zk: ZkClient;
  /** This instance's registry (identity, parent path). */
  readonly registry: ZookeeperWorkerRegistry;
  /** A worker ID is reclaimable once the clock is this far past its recorded horizon. */
  readonly marginMs: number;
  /** How long to wait for a worker ID to become reclaimable (0: one scan only). */
  readonly maxWaitMs: number;
}

/** A won claim: the registration to start from and the liveness node it holds. */
export interface WorkerReclaim {
  readonly registration: WorkerRegistration;
  readonly alive: WorkerAliveNode;
  /** The identity, run and horizon of the holder it took over from. */
  readonly previous: {
    readonly identity: string;
    readonly run: string | null;
    readonly horizon: number;
  };
}

/** A worker node as a reclaim scan sees it. */
interface Candidate {
  readonly path: string;
  readonly sequence: number;
  readonly data: WorkerNodeData;
  readonly version: number;
  /** The last millisecond its last holder may issue in. */
  readonly horizon: number;
  /** True when its data already names this instance (a node it reclaimed before). */
  readonly own: boolean;
}

/** Pause between scans while no worker ID is reclaimable yet. */
const RECLAIM_POLL_MS = 500;

const identityOf = (data: WorkerNodeData) => `${data.ip}:${data.port}`;

/**
 * Takes over the worker ID of an instance that is gone (docs/design.md, "Reclaiming worker
 * IDs"). A worker node is reclaimable when its liveness node is gone (no live session holds
 * the ID, so no one can write the node any more) and the clock is `marginMs` past the
 * horizon it records (its last holder issues nothing after that, even cut off from
 * ZooKeeper). The claim:
 *
 * 1. creates the liveness node `/snowflake/{name}/alive/{id}` in this session: no other
 *    live session can hold or claim the ID meanwhile;
 * 2. reads the node again and checks it is still reclaimable;
 * 3. writes its claim with ONE conditional write (`setData` with the version read): of two
 *    claimers, or a claimer and a returning holder, at most one write succeeds;
 * 4. a lost reply is settled by reading the node again: the claim is ours if the node carries
 *    our claim (its random nonce);
 * 5. checks that the liveness node is still ours: a session that expired in the middle has
 *    lost it, and the claim is then abandoned (the node, still past its horizon, stays
 *    reclaimable by anyone).
 *
 * The claim keeps the old holder's lease and horizon in the node, so the new holder (and
 * anyone after it) waits past them before issuing: {@link startupBoundFromNode} treats the
 * previous run as "another writer".
 *
 * Own nodes (this identity reclaimed them before) come first, then the oldest horizon.
 * While nothing is reclaimable, it scans again every 500 ms up to `maxWaitMs`.
 * @returns the claim, or `null` when no worker ID became reclaimable within `maxWaitMs`.
 * @throws {ZkError} when ZooKeeper fails.
 */
export async function reclaimWorkerId(input: WorkerReclaimInput): Promise<WorkerReclaim | null> {
  const { options, logger } = input;
  const clock = options.clock;
  const startedAt = clock.now();
  for (let scan = 1; ; scan++) {
    const { candidates, nextEligibleAt } = await scanCandidates(input);
    for (const candidate of candidates) {
      const won = await claim(input, candidate);
      if (won) return won;
    }
    const waited = clock.now() - startedAt;
    if (waited >= input.maxWaitMs) return null;
    if (scan === 1) {
      logger.warn(
        `No worker ID of /snowflake/${options.name} is reclaimable yet (each needs its liveness node gone and its horizon ${input.marginMs} ms past); waiting up to ${input.maxWaitMs} ms`,
      );
    }
    const pause = Math.max(
      1,
      Math.min(RECLAIM_POLL_MS, input.maxWaitMs - waited, nextEligibleAt - clock.now()),
    );
    await clock.sleep(pause);
  }
}

/**
 * The reclaimable worker nodes, best first, and when the next one that is not yet
 * reclaimable will be (by its horizon; `Infinity` when none).
 */
async function scanCandidates(input: WorkerReclaimInput) {
  const { zk, registry, options } = input;
  const { maxWorkerId } = snowflakeLayoutOf(options.snowflake);
  const [children, aliveChildren] = await Promise.all([
    childrenOf(zk, registry.parent),
    childrenOf(zk, workerAliveParent(options.name)),
  ]);
  const alive = new Set(aliveChildren);
  const free = children
    .map(parseWorkerNodeName)
    .filter(
      (node): node is NonNullable<typeof node> =>
        node !== null && node.sequence <= maxWorkerId && !alive.has(String(node.sequence)),
    );
  const read = await Promise.all(
    free.map(async (node): Promise<Candidate | null> => {
      const path = `${registry.parent}/${node.child}`;
      try {
        const { data, version } = await registry.readVersioned(path);
        const { horizon } = nodeLeaseOf(data, options.snowflake.localRunwayMs);
        const own = identityOf(data) === registry.identity;
        return { path, sequence: node.sequence, data, version, horizon, own };
      } catch (error) {
        // Gone meanwhile, or data no one can judge: not a candidate.
        if (error instanceof ZkError && error.zkCode !== 'NO_NODE') throw error;
        return null;
      }
    }),
  );
  const now = options.clock.now();
  let nextEligibleAt = Number.POSITIVE_INFINITY;
  const candidates: Candidate[] = [];
  for (const candidate of read) {
    if (candidate === null) continue;
    const eligibleAt = candidate.horizon + input.marginMs + 1;
    if (eligibleAt <= now) candidates.push(candidate);
    else nextEligibleAt = Math.min(nextEligibleAt, eligibleAt);
  }
  candidates.sort((a, b) => Number(b.own) - Number(a.own) || a.horizon - b.horizon);
  return { candidates, nextEligibleAt };
}

/** Steps 1-5 of {@link reclaimWorkerId} for one candidate; `null` when lost. */
async function claim(
  input: WorkerReclaimInput,
  candidate: Candidate,
): Promise<WorkerReclaim | null> {
  const { zk, registry, options, logger, run } = input;
  const clock = options.clock;
  const alive = new WorkerAliveNode(
    zk,
    options.name,
    candidate.sequence,
    registry.identity,
    clock.now(),
    run,
  );
  if (!(await alive.acquire()).acquired) return null;
  const lose = async (why: string) => {
    logger.log(`Reclaim of worker ID ${candidate.sequence} (${candidate.path}) lost: ${why}`);
    await alive.release();
    return null;
  };
  // Read again under the liveness node: what we judged may have changed since the scan.
  const current = await unlessNoNode(registry.readVersioned(candidate.path));
  if (current === null) return lose('the node is gone');
  const { data, version } = current;
  const { lease, horizon } = nodeLeaseOf(data, options.snowflake.localRunwayMs);
  if (horizon + input.marginMs >= clock.now())
    return lose(`its holder wrote it meanwhile (horizon ${new Date(horizon).toISOString()})`);
  const now = clock.now();
  const claimData: WorkerNodeData = {
    ip: registry.ip,
    port: registry.port,
    timestamp: now,
    // The previous holder's bounds stay: whoever starts from this node waits past them.
    reservedUntil: lease,
    horizon,
    run,
    registration: randomBytes(8).toString('hex'),
  };
  const encoded = encodeWorkerNodeData(claimData);
  try {
    await zk.setData(candidate.path, encoded, version);
  } catch (error) {
    if (isZkError(error, 'BAD_VERSION')) return lose('another process wrote the node first');
    if (!(error instanceof ZkError) || error.zkCode === 'NO_NODE') throw error;
    // The reply was lost (or the session ended): the write may have been applied.
    let current: Buffer | null = null;
    try {
      current = (await zk.getData(candidate.path)).data;
    } catch (readError) {
      logger.warn(
        `Could not read ${candidate.path} after a lost claim reply: ${String(readError)}`,
      );
    }
    if (current === null || !current.equals(encoded))
      return lose(`the conditional write failed (${error.message})`);
  }
  // Our write landed; it counts only if the session that holds the liveness node wrote it.
  if (!(await alive.held()))
    return lose('the session that held the liveness node ended during the claim');
  const previous = { identity: identityOf(data), run: data.run ?? null, horizon };
  logger.warn(
    `Reclaimed worker ID ${candidate.sequence} (${candidate.path}) from ${previous.identity}` +
      `${previous.run ? ` (run ${previous.run})` : ''}: its liveness node is gone and its horizon ${new Date(horizon).toISOString()} has passed`,
  );
  return {
    registration: {
      path: candidate.path,
      sequence: candidate.sequence,
      created: false,
      data: decodeWorkerNodeData(candidate.path, encoded),
    },
    alive,
    previous,
  };
}
