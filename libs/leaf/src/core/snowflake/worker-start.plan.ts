import { WorkerIdExhaustedError } from '../errors/worker-id-exhausted.error';
import { WorkerIdUnavailableError } from '../errors/worker-id-unavailable.error';
import { WorkerStateCorruptError } from '../errors/worker-state-corrupt.error';
import { ZkError, type ZkClient } from '../zookeeper/zk-client.port';
import type { SnowflakeLogger } from './snowflake-logger';
import { snowflakeLayoutOf, type ZookeeperWorkerSource } from './snowflake-settings';
import type { SnowflakeWorkerOptions } from './snowflake-worker.options';
import { startupBoundFromNode } from './startup-bound';
import { WorkerAliveNode } from './worker-alive.node';
import { reclaimWorkerId } from './worker-reclaim';
import type { WorkerLeaseCommitterOptions } from './worker-lease.committer';
import type { WorkerState, WorkerStateStore } from './worker-state';
import { zkWithin } from './zk-worker.binding';
import {
  OrdinalWorkerRegistry,
  ZookeeperWorkerRegistry,
  type WorkerRegistration,
} from './zookeeper-worker.registry';

/**
 * What a claim found out before the time check: the worker ID, the bound to wait past and
 * where it came from (docs/design.md, "Snowflake safety").
 */
export interface StartPlan {
  readonly workerId: number;
  readonly bound: number;
  readonly source: string;
  /** The state file as read at start when it was used. */
  readonly cached: WorkerState | null;
}

/** A ZooKeeper claim's plan: the node, the liveness node and what the committer starts from. */
export interface ZookeeperStartPlan extends StartPlan {
  readonly nodePath: string | null;
  /** What the node records as this run starts (for the committer). */
  readonly remote: WorkerLeaseCommitterOptions['remote'];
  /** False after a start from the state file, until ZooKeeper confirms the registration. */
  readonly verified: boolean;
  readonly registry: ZookeeperWorkerRegistry;
  /** The liveness node, and whether start-up created it. */
  readonly alive: WorkerAliveNode;
  readonly aliveHeld: boolean;
  /** The run id the node recorded at start (`undefined`: none, or not read yet). */
  readonly nodeRun: string | undefined;
  /** The node's version as read at start (`null`: not read); lease writes are conditional on it. */
  readonly nodeVersion: number | null;
}

/** What every plan shares: the state file, under its lock, and this run's id. */
export interface StartContext {
  readonly options: SnowflakeWorkerOptions;
  readonly logger: SnowflakeLogger;
  readonly file: WorkerStateStore;
  readonly run: string;
}

/**
 * ZooKeeper mode: register the identity, take the liveness node, read the node and compute
 * the bound ({@link startupBoundFromNode}); with ZooKeeper unreachable, start from this host's
 * state file.
 * @throws {WorkerIdExhaustedError}, {@link WorkerIdInUseError}, {@link WorkerIdUnavailableError}, {@link WorkerStateCorruptError}
 */
export async function planZookeeper(
  context: StartContext,
  zkOptions: ZookeeperWorkerSource,
  zk: ZkClient,
  /** A StatefulSet ordinal's node instead of a sequential one (no reclaim). */
  ordinal: OrdinalWorkerRegistry | null = null,
): Promise<ZookeeperStartPlan> {
  const { options, logger, file, run } = context;
  const sf = options.snowflake;
  const { ip, port } = zkOptions.advertise;
  const registry =
    ordinal ?? new ZookeeperWorkerRegistry(zk, options.name, ip, port, options.clock, logger);
  const cache = await file.read();
  const within = <T>(work: Promise<T>, what: string) =>
    zkWithin(work, zkOptions.connectTimeoutMs, what);
  const aliveNode = (workerId: number) =>
    new WorkerAliveNode(zk, options.name, workerId, registry.identity, options.clock.now(), run);

  let unreachable: ZkError | null = null;
  let registration: WorkerRegistration | null = null;
  let alive: WorkerAliveNode | null = null;
  let nodeVersion: number | null = null;
  try {
    await zk.connect(zkOptions.connectTimeoutMs);
    // A StatefulSet ordinal is its own worker ID: nothing to reclaim.
    const mode = ordinal ? 'never' : zkOptions.reclaim;
    const maxWorkerId = snowflakeLayoutOf(sf).maxWorkerId;
    const reclaim = (maxWaitMs: number) =>
      reclaimWorkerId({ ...context, zk, registry, marginMs: zkOptions.reclaimMarginMs, maxWaitMs });
    let registered: WorkerRegistration | null = null;
    // `always`: a reclaimable worker ID before a fresh sequence, unless this identity has a node.
    if (
      mode === 'always' &&
      (await within(registry.find(), `listing ${registry.parent}`)) === null
    ) {
      const won = await reclaim(0);
      if (won) ({ registration: registered, alive } = won);
    }
    if (registered === null) {
      registered = await within(registry.register(), `registering ${registry.identity}`);
      if (registered.sequence > maxWorkerId) {
        const exhausted = new WorkerIdExhaustedError(
          registered.sequence,
          registered.path,
          registry.identity,
          maxWorkerId,
          mode,
        );
        if (mode === 'never') throw exhausted;
        // Fresh sequences are used up: take over the worker ID of an instance that is gone.
        await registry.discard(registered);
        const won = await reclaim(sf.startupMaxWaitMs);
        if (!won) throw exhausted;
        ({ registration: registered, alive } = won);
      }
    }
    if (alive === null) {
      alive = aliveNode(registered.sequence);
      await alive.acquireAtStart(
        zkOptions.sessionTimeoutMs,
        zkOptions.connectTimeoutMs,
        options.clock,
        logger,
      );
    }
    // Read again now that no other session holds the liveness node: a predecessor may have
    // extended its lease between the registration and its session's end.
    const current = await within(
      registry.readVersioned(registered.path),
      `reading ${registered.path}`,
    );
    registration = { ...registered, data: current.data };
    nodeVersion = current.version;
  } catch (error) {
    // Only ZooKeeper's own failures lead to the state file; a refusal (exhausted, in use,
    // corrupt node data) is final. The state file path is time-checked like any other.
    if (alive) await alive.releaseWithin(sf.heartbeatIntervalMs);
    if (!(error instanceof ZkError)) throw error;
    unreachable = error;
    registration = null;
  }

  if (registration) {
    const { path, data, sequence, created } = registration;
    // The cached state if it describes the node ZooKeeper gave us; a mismatch is logged and ignored.
    const fileState = cache.status === 'ok' ? cache.state : null;
    const cached = fileState?.workerId === sequence && fileState.zkNode === path ? fileState : null;
    if (cache.status === 'ok' && cached === null) {
      logger.warn(
        `State file ${file.path} records worker ${cache.state.workerId} (${cache.state.zkNode}) but ZooKeeper assigns ${sequence} (${path}); ZooKeeper wins and the file is rewritten`,
      );
    } else if (cache.status === 'corrupt') {
      logger.warn(
        `${cache.error.message} ZooKeeper is reachable, so the file is ignored and rewritten.`,
      );
    }
    const start = startupBoundFromNode({
      path,
      data,
      created,
      cached,
      stateFile: file.path,
      localRunwayMs: sf.localRunwayMs,
    });
    return {
      workerId: sequence,
      nodePath: path,
      bound: start.bound,
      source: start.source,
      remote: start.remote,
      verified: true,
      registry,
      alive: alive!,
      aliveHeld: true,
      cached,
      nodeRun: data.run,
      nodeVersion,
    };
  }

  const why = unreachable?.message ?? 'unknown error';
  if (cache.status === 'missing') {
    throw new WorkerIdUnavailableError(
      `ZooKeeper at ${zkOptions.connect} is unreachable (${why}) and there is no state file ${file.path} for ${registry.identity}: ` +
        "a worker ID cannot be assigned safely. Fix: make ZooKeeper reachable (a first start always needs it), or restore this instance's state file.",
      { cause: unreachable },
    );
  }
  if (cache.status === 'corrupt') {
    throw new WorkerStateCorruptError(
      cache.error.source,
      `${cache.error.reason}; ZooKeeper at ${zkOptions.connect} is unreachable (${why}), so nothing else tells which worker ID and time this instance may use`,
      'Make ZooKeeper reachable (the file is then rewritten), or restore the correct state file.',
      { cause: unreachable },
    );
  }
  const state = cache.state;
  logger.warn(
    `ZooKeeper at ${zkOptions.connect} is unreachable (${why}); starting worker ${state.workerId} from ${file.path}. ` +
      'The registration is confirmed once ZooKeeper is back; until then the lease is extended locally, up to the horizon last recorded in ZooKeeper.',
  );
  return {
    workerId: state.workerId,
    nodePath: state.zkNode,
    bound: state.reservedUntil,
    source: `state file ${file.path} (ZooKeeper unreachable)`,
    // A version 1 file records no horizon: no local extension then.
    remote: { writtenAt: state.zkSyncedAt, horizon: state.zkHorizon },
    verified: false,
    registry,
    // Created once ZooKeeper is back and confirms the registration.
    alive: aliveNode(state.workerId),
    aliveHeld: false,
    cached: state,
    nodeRun: undefined,
    nodeVersion: null,
  };
}
