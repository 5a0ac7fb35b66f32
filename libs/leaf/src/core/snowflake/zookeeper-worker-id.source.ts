import type { OrdinalWorkerSource, ZookeeperWorkerSource } from './snowflake-settings';
import { LocalWorkerIdSource } from './local-worker-id.source';
import type {
  WorkerClaim,
  WorkerClaimSnapshot,
  WorkerHolding,
  WorkerIdSource,
} from './worker-id-source.port';
import { WorkerLeaseCommitter } from './worker-lease.committer';
import { listSnowflakeWorkers, type SnowflakeWorkerInfo } from './worker-listing';
import { WorkerSessionGuard } from './worker-session.guard';
import type { AssembledWorker } from './worker-start.assembly';
import { planZookeeper, type StartContext, type ZookeeperStartPlan } from './worker-start.plan';
import type { WorkerIdentity } from './worker-state';
import { ZkWorkerBinding } from './zk-worker.binding';
import { OrdinalWorkerRegistry } from './zookeeper-worker.registry';
import type { ZkClient } from '../zookeeper/zk-client.port';

/**
 * {@link WorkerIdSource} on ZooKeeper (docs/design.md, "Snowflake safety"): a sequential node
 * per `ip:port` identity (or a StatefulSet ordinal's own node), a liveness node, the lease in
 * the node; with ZooKeeper unreachable at start, this host's state file. Owns its client.
 */
export class ZookeeperWorkerIdSource implements WorkerIdSource {
  readonly kind: string;

  constructor(
    readonly zk: ZkClient,
    private readonly settings: ZookeeperWorkerSource,
    /** A StatefulSet ordinal's worker ID: told and held like a local one, guarded here too. */
    private readonly ordinal: LocalWorkerIdSource | null = null,
  ) {
    this.kind = ordinal ? 'ordinal' : 'zookeeper';
  }

  /** A StatefulSet ordinal's worker ID, guarded in ZooKeeper by its own node. */
  static forOrdinal(
    zk: ZkClient,
    connection: NonNullable<OrdinalWorkerSource['zookeeper']>,
    { hostname, workerId }: Pick<OrdinalWorkerSource, 'hostname' | 'workerId'>,
  ): ZookeeperWorkerIdSource {
    const settings: ZookeeperWorkerSource = {
      kind: 'zookeeper',
      ...connection,
      advertise: { ip: hostname, port: 0 },
      // An ordinal is this pod's own worker ID: never reclaimed, so no margin either.
      reclaim: 'never',
      reclaimMarginMs: 0,
    };
    return new ZookeeperWorkerIdSource(zk, settings, new LocalWorkerIdSource(workerId, hostname));
  }

  describe(): string {
    return this.ordinal?.describe() ?? 'on ZooKeeper';
  }

  identity(name: string): WorkerIdentity {
    // An ordinal worker ID is guarded like an embedded one: the state volume's lock and lease.
    if (this.ordinal) return this.ordinal.identity(name);
    return { kind: 'zookeeper', name, ...this.settings.advertise };
  }

  async claim(context: StartContext): Promise<WorkerClaim> {
    const { options, logger } = context;
    const registry = this.ordinal
      ? new OrdinalWorkerRegistry(
          this.zk,
          options.name,
          this.settings.advertise.ip,
          this.ordinal.workerId,
          options.clock,
          logger,
        )
      : null;
    const plan = await planZookeeper(context, this.settings, this.zk, registry);
    return new ZookeeperWorkerClaim(this.zk, context, plan);
  }

  /** @throws {ZkError} when not connected within `connectTimeoutMs` */
  open(): Promise<void> {
    return this.zk.connect(this.settings.connectTimeoutMs);
  }

  async holderAt(name: string, workerId: number): Promise<WorkerHolding> {
    if (this.ordinal) return this.ordinal.holderAt(name, workerId);
    const node = (await this.list(name)).find((w) => w.workerId === workerId);
    if (!node) return { unknown: `worker ID ${workerId} has no node under /snowflake/${name}` };
    const reclaimed = node.holder !== null && node.holder !== node.identity;
    return {
      instance: node.identity,
      holder: node.holder,
      run: node.run,
      note: reclaimed
        ? `the node was created for ${node.identity}; ${node.holder} reclaimed it since (ZooKeeper keeps no history of reclaims)`
        : null,
    };
  }

  list(name: string): Promise<SnowflakeWorkerInfo[]> {
    return listSnowflakeWorkers(this.zk, name);
  }

  close(): Promise<void> {
    return this.zk.close();
  }
}

/** A worker ID held in ZooKeeper: the node's binding, its committer and the session's guard. */
class ZookeeperWorkerClaim implements WorkerClaim {
  private readonly binding: ZkWorkerBinding;
  readonly committer: WorkerLeaseCommitter;
  private guard: WorkerSessionGuard | null = null;

  constructor(
    private readonly zk: ZkClient,
    private readonly context: StartContext,
    readonly plan: ZookeeperStartPlan,
  ) {
    const sf = context.options.snowflake;
    this.binding = new ZkWorkerBinding(
      zk,
      plan.registry,
      plan.nodePath,
      plan.verified,
      plan.aliveHeld,
      sf.heartbeatIntervalMs,
      context.run,
      plan.nodeRun,
      plan.nodeVersion,
    );
    this.committer = new WorkerLeaseCommitter(
      context.file,
      this.binding,
      {
        workerId: plan.workerId,
        zkNode: plan.nodePath,
        localRunwayMs: sf.localRunwayMs,
        run: context.run,
        remote: plan.remote,
      },
      context.logger,
    );
  }

  started(worker: AssembledWorker): void {
    this.binding.onNodeGone = (reason) => {
      worker.logger.error(`Snowflake worker stops issuing IDs: ${reason}`);
      worker.lease.revoke(reason);
    };
    this.guard = new WorkerSessionGuard(
      { ...worker, plan: this.plan, committer: this.committer },
      this.binding,
      this.zk,
    );
  }

  async beforeExtend(): Promise<void> {
    await this.guard?.beforeExtend();
  }

  async stop(): Promise<void> {
    await this.guard?.stop();
  }

  async release(refused: boolean): Promise<void> {
    if (refused) await this.guard?.stop();
    const held = refused ? this.plan.aliveHeld : this.binding.aliveHeld;
    if (held)
      await this.plan.alive.releaseWithin(this.context.options.snowflake.heartbeatIntervalMs);
  }

  snapshot(): WorkerClaimSnapshot {
    return {
      identity: this.plan.registry.identity,
      nodePath: this.binding.nodePath,
      zookeeper: {
        connected: this.zk.connected,
        verified: this.binding.verified,
        lastWriteAt: this.committer.lastRemoteWrite,
        alive: this.binding.aliveHeld,
        fenced: this.binding.fenced,
        horizon: this.committer.recordedHorizon,
      },
      database: null,
    };
  }
}
