import type { ZkClient, ZkConnectionState } from '../zookeeper/zk-client.port';
import { startupBoundFromNode } from './startup-bound';
import type { WorkerAliveNode } from './worker-alive.node';
import type { AssembledWorker } from './worker-start.assembly';
import type { WorkerLeaseCommitter } from './worker-lease.committer';
import { aliveHolderOf } from './worker-listing';
import type { ZookeeperStartPlan } from './worker-start.plan';
import { zkWithin, type ZkWorkerBinding } from './zk-worker.binding';

/** A worker whose ID ZooKeeper holds: its plan and its committer are ZooKeeper's. */
export type ZookeeperWorker = Omit<AssembledWorker, 'plan'> & {
  readonly plan: ZookeeperStartPlan;
  readonly committer: WorkerLeaseCommitter;
};

/**
 * What keeps a running ZooKeeper-bound worker's ID valid after start-up: its reaction to the
 * session's state changes, the confirmation of a start from the state file, and the liveness
 * node (docs/design.md, "Snowflake safety"). `SnowflakeWorker` calls it before each lease
 * extension and on stop.
 *
 * After a session expiry the lease is fenced (not extended at all) until the liveness node
 * is created again in the new session and the worker node shows no other writer; if someone
 * else holds it or wrote meanwhile, the lease is revoked.
 */
export class WorkerSessionGuard {
  private unsubscribe: (() => void) | null;
  private verifying: Promise<void> | null = null;
  private aliving: Promise<void> | null = null;
  private stopped = false;
  /** The run id the node recorded when this run last confirmed it. */
  private knownNodeRun: string | undefined;

  constructor(
    private readonly worker: ZookeeperWorker,
    private readonly binding: ZkWorkerBinding,
    private readonly zk: ZkClient,
  ) {
    this.knownNodeRun = worker.plan.nodeRun;
    this.unsubscribe = zk.onStateChange((state) => this.onZkState(state));
  }

  /**
   * Before a heartbeat extends the lease: confirms a pending registration if ZooKeeper is
   * back, and takes the liveness node again if the session lost it.
   */
  async beforeExtend(): Promise<void> {
    await this.verifyIfNeeded();
    await this.ensureAlive();
  }

  /** Stops following the session and waits for a check in flight. Never throws. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.unsubscribe?.();
    this.unsubscribe = null;
    await this.verifying;
    await this.aliving;
  }

  private onZkState(state: ZkConnectionState): void {
    if (this.stopped) return;
    if (state === 'expired') {
      // ZooKeeper deleted the liveness node with the session: a successor may take the worker
      // ID from now on, so nothing is extended until the node is held again.
      this.binding.sessionLost();
    }
    if (state !== 'connected') {
      this.worker.logger.warn(
        state === 'expired'
          ? 'ZooKeeper session expired; the time lease is not extended (IDs are issued only within the current lease) until a new session holds the liveness node again'
          : 'ZooKeeper connection lost; the time lease is extended in the local state file only, up to the horizon recorded in ZooKeeper (localRunwayMs)',
      );
      return;
    }
    void this.catchUp();
  }

  /** After a (re)connect: confirm the registration if needed, then bring the node up to date. */
  private async catchUp(): Promise<void> {
    try {
      await this.verifyIfNeeded();
      await this.ensureAlive();
      if (this.stopped || !this.binding.available || this.worker.lease.snapshot().revoked !== null)
        return;
      await this.worker.lease.extendAfterCurrent();
      this.worker.logger.log(
        `ZooKeeper connected; time lease of worker ${this.worker.plan.workerId} recorded in ${this.binding.nodePath}`,
      );
    } catch (error) {
      this.worker.logger.warn(`Could not catch ZooKeeper up after reconnecting: ${String(error)}`);
    }
  }

  private verifyIfNeeded(): Promise<void> {
    const binding = this.binding;
    if (binding.verified || !this.zk.connected) return Promise.resolve();
    this.verifying ??= this.verify(binding).finally(() => {
      this.verifying = null;
    });
    return this.verifying;
  }

  /**
   * (Re)creates the liveness node when the current session does not hold it: after a
   * session expiry, or once a start from the state file is confirmed. Someone else holding
   * it means another live process took this worker ID meanwhile: stop issuing for good.
   */
  private ensureAlive(): Promise<void> {
    const alive = this.worker.plan.alive;
    const binding = this.binding;
    if (!alive || binding.aliveHeld || this.stopped || !binding.verified || !this.zk.connected) {
      return Promise.resolve();
    }
    if (this.worker.lease.snapshot().revoked !== null) return Promise.resolve();
    this.aliving ??= this.acquireAlive(alive, binding).finally(() => {
      this.aliving = null;
    });
    return this.aliving;
  }

  private async acquireAlive(alive: WorkerAliveNode, binding: ZkWorkerBinding): Promise<void> {
    const epoch = binding.sessionEpoch;
    const { plan, logger, committer, run } = this.worker;
    const timeoutMs = this.worker.options.snowflake.heartbeatIntervalMs;
    const result = await this.orWarn(
      zkWithin(alive.acquire(), timeoutMs, `creating ${alive.path}`),
      `create the liveness node ${alive.path}`,
    );
    if (!result) return;
    if (!result.acquired) {
      const holder = aliveHolderOf(result.holder)?.identity ?? null;
      this.revoke(
        holder !== null && holder !== alive.identity
          ? `worker ID ${plan.workerId} was taken over by ${holder} while this run's ZooKeeper session was gone (liveness node ${alive.path}: ${result.holder}); ` +
              'this run stops issuing (self-fencing); restart it to register or reclaim a worker ID'
          : `another live process holds worker ID ${plan.workerId} for ${alive.identity} (liveness node ${alive.path}${result.holder ? `: ${result.holder}` : ''}); ` +
              'give each instance its own LEAF_SNOWFLAKE_ADVERTISE and restart this one',
      );
      return;
    }
    // While this run held no liveness node, another run may have taken the worker ID, issued
    // IDs and ended: its record in the worker node says so, and its horizon may still be ahead.
    const path = binding.nodePath!;
    const node = await this.orWarn(
      zkWithin(binding.registry.read(path), timeoutMs, `reading ${path}`),
      `read the worker node ${path}`,
    );
    if (!node) return;
    const writer = node.run;
    if (writer !== (committer.wroteRemote ? run : this.knownNodeRun)) {
      this.revoke(
        `the worker node ${path} was written by another run (${writer ?? 'unknown'}) while this one held no liveness node: ` +
          'another process took worker ID ' +
          `${plan.workerId} meanwhile and may still issue IDs; restart this instance (its start-up waits past the other run's horizon)`,
      );
      return;
    }
    // A create that raced with an expiry belonged to the old session: try again later.
    if (!binding.aliveAcquired(epoch)) return;
    logger.log(`Liveness node ${alive.path} created for worker ID ${plan.workerId}`);
  }

  /** What `work` resolves to, or `undefined` once logged as not done yet (tried again later). */
  private async orWarn<T>(work: Promise<T>, what: string): Promise<T | undefined> {
    try {
      return await work;
    } catch (error) {
      this.worker.logger.warn(`Could not ${what} yet: ${String(error)}`);
      return undefined;
    }
  }

  private revoke(reason: string): void {
    this.worker.logger.error(`Snowflake worker stops issuing IDs: ${reason}`);
    this.worker.lease.revoke(reason);
  }

  /**
   * The worker started from its state file while ZooKeeper was down: now that it is back,
   * make sure ZooKeeper still assigns this worker ID to this identity and records nothing the
   * start-up bound did not cover. If not, stop issuing for good: someone else may be
   * entitled to it, or may have issued IDs after the state file was written.
   */
  private async verify(binding: ZkWorkerBinding): Promise<void> {
    const { registry } = binding;
    const { plan, logger } = this.worker;
    const find = async () => {
      const own = await registry.find();
      // A worker ID this identity reclaimed sits in a node named for another identity.
      if (own?.sequence === plan.workerId || plan.nodePath === null) return own;
      return (await registry.heldAt(plan.nodePath, plan.workerId)) ?? own;
    };
    const found = await this.orWarn(find(), 'confirm the worker registration in ZooKeeper');
    if (found === undefined) return;
    if (found && found.sequence === plan.workerId) {
      const data = await this.orWarn(
        registry.read(found.path),
        `read the worker node ${found.path}`,
      );
      if (!data) return;
      const needed = startupBoundFromNode({
        path: found.path,
        data,
        created: false,
        cached: plan.cached,
        stateFile: this.worker.file.path,
        localRunwayMs: this.worker.options.snowflake.localRunwayMs,
      });
      if (needed.bound > plan.bound) {
        this.revoke(
          `ZooKeeper requires waiting past ${needed.bound} for worker ID ${plan.workerId} (${needed.source}), ` +
            `later than the bound ${plan.bound} this instance started from (its state file is stale, or another run wrote the node); restart it`,
        );
        return;
      }
      this.knownNodeRun = data.run;
      binding.confirm(found.path, data.run);
      logger.log(
        `ZooKeeper confirms worker ID ${plan.workerId} for ${registry.identity} (${found.path})`,
      );
      return;
    }
    this.revoke(
      found
        ? `ZooKeeper assigns worker ID ${found.sequence} (${found.path}) to ${registry.identity}, but this instance started from its state file with worker ID ${plan.workerId}; restart it`
        : `ZooKeeper has no node for ${registry.identity} under ${registry.parent} any more, but this instance started from its state file with worker ID ${plan.workerId}; restart it to register again`,
    );
  }
}
