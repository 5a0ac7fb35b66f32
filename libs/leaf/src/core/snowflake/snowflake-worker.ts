import { randomBytes } from 'node:crypto';
import type { LeafObserver } from '../leaf-observer';
import type { Clock } from '../clock';
import { StartupClockBehindError } from '../errors/startup-clock-behind.error';
import { WorkerIdUnavailableError } from '../errors/worker-id-unavailable.error';
import type { ZkClient, ZkConnectionState } from '../zookeeper/zk-client.port';
import { waitUntilPast } from './clock-guard';
import { SnowflakeGenerator, type SnowflakeGeneratorSnapshot } from './snowflake-generator';
import type { SnowflakeLayout } from './snowflake-layout';
import { silentSnowflakeLogger, type SnowflakeLogger } from './snowflake-logger';
import { startupBoundFromNode } from './startup-bound';
import {
  planEmbedded,
  planZookeeper,
  type StartContext,
  type StartPlan,
} from './worker-start.plan';
import { TimeLease, type TimeLeaseSnapshot } from './time-lease';
import { WorkerAliveNode } from './worker-alive.node';
import { WorkerLeaseCommitter } from './worker-lease.committer';
import { snowflakeLayoutOf, type SnowflakeSettings } from './snowflake-settings';
import type {
  WorkerStateLockHandle,
  WorkerStateStore,
  WorkerStateStoreFactory,
} from './worker-state';
import { zkWithin, ZkWorkerBinding } from './zk-worker.binding';
import { OrdinalWorkerRegistry, type ZookeeperWorkerRegistry } from './zookeeper-worker.registry';

/** What a {@link SnowflakeWorker} needs to start. */
export interface SnowflakeWorkerOptions {
  /** The module's `name` (ZooKeeper namespace `/snowflake/{name}`). */
  readonly name: string;
  /** Resolved snowflake settings. */
  readonly snowflake: SnowflakeSettings;
  readonly clock: Clock;
  /** The ZooKeeper client; required with a ZooKeeper worker source, ignored otherwise. The caller closes it. */
  readonly zk?: ZkClient | null;
  /** The local state of an identity (the library's file store in `adapters/fs`). */
  readonly stateStore: WorkerStateStoreFactory;
  /** @default silent */
  readonly logger?: SnowflakeLogger;
  /** Told of lease extensions and clock steps back (metrics). @default none */
  readonly observer?: LeafObserver | null;
  /** Random source for the sequence start. @default Math.random */
  readonly random?: () => number;
  /** See {@link SnowflakeGeneratorOptions.tickPollMs}. @default 2 */
  readonly tickPollMs?: number;
}

/** How the worker ID was assigned. */
export type SnowflakeWorkerMode = 'zookeeper' | 'embedded' | 'ordinal';

/** Monitoring view of a running worker. */
export interface SnowflakeWorkerSnapshot {
  readonly mode: SnowflakeWorkerMode;
  readonly workerId: number;
  /** `ip:port` with ZooKeeper, `embedded` otherwise. */
  readonly identity: string;
  readonly nodePath: string | null;
  readonly stateFile: string;
  readonly startedAt: number;
  /** The persisted bound the clock had to pass at start, and where it came from. */
  readonly startupBound: number;
  readonly startupBoundSource: string;
  readonly startupWaitMs: number;
  /** `null` in embedded mode. */
  readonly zookeeper: {
    readonly connected: boolean;
    /** False after a start from the state file until ZooKeeper confirmed the registration. */
    readonly verified: boolean;
    readonly lastWriteAt: number | null;
    /** True while this worker holds its liveness node `/snowflake/{name}/alive/{workerId}`. */
    readonly alive: boolean;
    /** Why the lease is not extended at all (the session holding the liveness node expired), or `null`. */
    readonly fenced: string | null;
    /** The horizon the node records: local-only extensions stop there. */
    readonly horizon: number | null;
  } | null;
  /** This run's random id, recorded in the node, the state file and the liveness node. */
  readonly run: string;
  /** The lock file held for the whole life of the worker. */
  readonly lockFile: string;
  readonly lease: TimeLeaseSnapshot;
  readonly generator: SnowflakeGeneratorSnapshot;
}

/** Whether the worker can issue an ID now, and if not, why. */
export interface SnowflakeReadiness {
  readonly ready: boolean;
  readonly reason: string | null;
}

/**
 * One snowflake worker: its worker ID, time lease and generator, and what keeps them
 * valid (ZooKeeper state changes, the heartbeat). Plain TypeScript, no Nest. The safety
 * argument is in docs/design.md, "Snowflake safety".
 *
 * Start-up ({@link SnowflakeWorker.start}):
 * 1. The state file's lock: a second process on the same identity and state directory
 *    refuses ({@link WorkerStateLockedError}).
 * 2. Worker ID: with ZooKeeper, register `ip:port` (reuse its node or create one) and take
 *    the liveness node `/snowflake/{name}/alive/{workerId}`; if ZooKeeper cannot be reached
 *    within `connectTimeoutMs`, start from the local state file (no file or an unusable one
 *    → refuse). Embedded: the configured ID.
 * 3. Bound: see {@link startupBoundFromNode}; embedded, the state file's lease.
 * 4. Wait (up to `startupMaxWaitMs`) until the clock is past the bound, else refuse.
 * 5. Extend the lease once, durably, before the first ID; refuse if that fails.
 *
 * Liveness guard (with ZooKeeper): a liveness node held by another session that does not
 * disappear within `sessionTimeoutMs` + a margin (a crashed previous run's would) means
 * another live process advertises the same `ip:port`: start-up refuses
 * ({@link WorkerIdInUseError}). After a session expiry the lease is fenced (not extended at
 * all) until the node is created again in the new session and the worker node shows no
 * other writer; if someone else holds it or wrote meanwhile, the lease is revoked. A
 * graceful stop deletes it.
 */
export class SnowflakeWorker {
  private unsubscribe: (() => void) | null = null;
  private verifying: Promise<void> | null = null;
  private stopped = false;
  private aliving: Promise<void> | null = null;
  /** The run id the node recorded when this run last confirmed it. */
  private knownNodeRun: string | undefined;

  private constructor(
    private readonly options: SnowflakeWorkerOptions,
    private readonly logger: SnowflakeLogger,
    private readonly plan: StartPlan,
    private readonly file: WorkerStateStore,
    private readonly lock: WorkerStateLockHandle,
    private readonly binding: ZkWorkerBinding | null,
    private readonly committer: WorkerLeaseCommitter,
    /** The time lease. */
    readonly lease: TimeLease,
    /** The generator; issues IDs only within the lease. */
    readonly generator: SnowflakeGenerator,
    /** The bit layout (epoch) in use. */
    readonly layout: SnowflakeLayout,
    /** This run's random id. */
    readonly run: string,
    private readonly startedAt: number,
    private readonly startupWaitMs: number,
  ) {
    this.knownNodeRun = plan.nodeRun;
    const zk = options.zk;
    if (binding && zk) this.unsubscribe = zk.onStateChange((state) => this.onZkState(state));
  }

  /**
   * Locks the state file, assigns the worker ID, checks the clock against the persisted
   * lease and extends it.
   * @throws {WorkerStateLockedError} another running process uses the same state file.
   * @throws {WorkerIdUnavailableError} ZooKeeper unreachable and no state file, or no ZooKeeper client given.
   * @throws {WorkerStateCorruptError} the state file (when needed) or the node data is unusable.
   * @throws {WorkerIdExhaustedError} the node's sequence is 1024 or more.
   * @throws {WorkerIdInUseError} another live process (same `ip:port`) holds the worker ID.
   * @throws {StartupClockBehindError} the clock did not pass the bound within `startupMaxWaitMs`.
   * @throws {TimeLeaseUnavailableError} the first extension could not be made durable.
   */
  static async start(options: SnowflakeWorkerOptions): Promise<SnowflakeWorker> {
    const logger = options.logger ?? silentSnowflakeLogger;
    const sf = options.snowflake;
    const source = sf.workerSource;
    const zkSource =
      source.kind === 'zookeeper'
        ? source
        : source.kind === 'ordinal' && source.zookeeper
          ? ({
              kind: 'zookeeper',
              ...source.zookeeper,
              advertise: { ip: source.hostname, port: 0 },
              // An ordinal is this pod's own worker ID: never reclaimed, so no margin either.
              reclaim: 'never',
              reclaimMarginMs: 0,
            } as const)
          : null;
    const zk = zkSource ? options.zk : null;
    if (zkSource && !zk)
      throw new WorkerIdUnavailableError(
        'snowflake.zookeeper is configured but no ZooKeeper client was provided',
      );
    // An ordinal worker ID is guarded like an embedded one: the state volume's lock and lease.
    const file = options.stateStore(
      source.kind === 'zookeeper'
        ? { kind: 'zookeeper', name: options.name, ...source.advertise }
        : { kind: 'embedded', name: options.name, workerId: source.workerId },
    );
    const run = randomBytes(8).toString('hex');
    const lock = await file.lock(options.clock.now());
    const context: StartContext = { options, logger, file, run };
    let plan: StartPlan | null = null;
    try {
      plan =
        source.kind !== 'zookeeper' && zkSource === null
          ? await planEmbedded(context, source.workerId)
          : await planZookeeper(
              context,
              zkSource!,
              zk!, // checked above
              source.kind === 'ordinal'
                ? new OrdinalWorkerRegistry(
                    zk!,
                    options.name,
                    source.hostname,
                    source.workerId,
                    options.clock,
                    logger,
                  )
                : null,
            );
      return await SnowflakeWorker.startWith(context, lock, plan);
    } catch (error) {
      // Refused: let another start take the worker ID at once.
      if (plan?.aliveHeld) await plan.alive?.releaseWithin(sf.heartbeatIntervalMs);
      await lock.release();
      throw error;
    }
  }

  private static async startWith(
    context: StartContext,
    lock: WorkerStateLockHandle,
    plan: StartPlan,
  ): Promise<SnowflakeWorker> {
    const { options, logger, file, run } = context;
    const sf = options.snowflake;
    const clock = options.clock;
    const wait = await waitUntilPast(clock, plan.bound, sf.startupMaxWaitMs);
    if (!wait.ok) {
      throw new StartupClockBehindError(
        plan.workerId,
        plan.bound,
        wait.now,
        wait.offsetMs,
        sf.startupMaxWaitMs,
        plan.source,
      );
    }
    if (wait.waitedMs > 0) {
      logger.log(
        `Waited ${wait.waitedMs} ms for the clock to pass the time lease of worker ${plan.workerId} (${plan.source})`,
      );
    }

    const binding =
      plan.registry && options.zk
        ? new ZkWorkerBinding(
            options.zk,
            plan.registry,
            plan.nodePath,
            plan.verified,
            plan.aliveHeld,
            sf.heartbeatIntervalMs,
            { run, nodeRun: plan.nodeRun, version: plan.nodeVersion },
          )
        : null;
    const committer = new WorkerLeaseCommitter(
      file,
      binding,
      {
        workerId: plan.workerId,
        zkNode: plan.nodePath,
        localRunwayMs: sf.localRunwayMs,
        run,
        remote: plan.remote,
      },
      logger,
    );
    const lease = new TimeLease(plan.workerId, plan.bound, committer, clock, {
      leaseMs: sf.leaseMs,
      // Heartbeats normally keep the bound leaseMs ahead; renew from the hot path only when
      // one is late by half of the slack between them.
      renewBeforeMs: Math.max(1, Math.floor((sf.leaseMs - sf.heartbeatIntervalMs) / 2)),
      retryBackoffMs: Math.min(1000, sf.heartbeatIntervalMs),
      observer: options.observer,
    });
    if (binding) {
      binding.onNodeGone = (reason) => {
        logger.error(`Snowflake worker stops issuing IDs: ${reason}`);
        lease.revoke(reason);
      };
    }
    await lease.extend();
    const layout = snowflakeLayoutOf(sf);
    const generator = new SnowflakeGenerator(
      layout,
      plan.workerId,
      clock,
      lease,
      {
        sequenceRandomBound: sf.sequenceRandomBound,
        clockBackwardsToleranceMs: sf.clockBackwardsToleranceMs,
        random: options.random,
        tickPollMs: options.tickPollMs,
        observer: options.observer,
      },
      plan.bound,
    );
    const worker = new SnowflakeWorker(
      options,
      logger,
      plan,
      file,
      lock,
      binding,
      committer,
      lease,
      generator,
      layout,
      run,
      clock.now(),
      wait.waitedMs,
    );
    logger.log(`Snowflake layout: ${layout.describe()}`);
    logger.log(
      `Snowflake worker ${plan.workerId} started (${worker.mode}${plan.nodePath ? `, ${plan.nodePath}` : ''}, run ${run}); time lease until ${new Date(lease.reservedUntil).toISOString()}`,
    );
    return worker;
  }

  /** The worker ID. */
  get workerId(): number {
    return this.plan.workerId;
  }

  /** `zookeeper` or `embedded`. */
  get mode(): SnowflakeWorkerMode {
    if (this.options.snowflake.workerSource.kind === 'ordinal') return 'ordinal';
    return this.plan.registry ? 'zookeeper' : 'embedded';
  }

  /**
   * One heartbeat: confirms a pending registration if ZooKeeper is back, takes the liveness
   * node again if the session lost it, then extends the lease to `now + leaseMs` (ZooKeeper
   * node and state file).
   * @throws {TimeLeaseUnavailableError} when the extension failed entirely.
   */
  async heartbeat(): Promise<void> {
    if (this.stopped) return;
    await this.verifyIfNeeded();
    await this.ensureAlive();
    await this.lease.extend();
  }

  /** Whether an ID can be issued now. Never throws. */
  readiness(): SnowflakeReadiness {
    const now = this.options.clock.now();
    const lease = this.lease.snapshot();
    const last = this.generator.lastIssuedTimestamp;
    if (this.stopped || lease.closed) return { ready: false, reason: 'stopped' };
    if (lease.revoked !== null) return { ready: false, reason: lease.revoked };
    if (now > this.layout.maxTimestamp)
      return {
        ready: false,
        reason: `the timestamp no longer fits ${this.layout.spec.timestampBits} bits`,
      };
    if (now < last - this.options.snowflake.clockBackwardsToleranceMs) {
      return {
        ready: false,
        reason: `the clock is ${last - now} ms behind the last issued timestamp`,
      };
    }
    if (now > lease.reservedUntil) {
      return {
        ready: false,
        reason: `the time lease ended at ${lease.reservedUntil}${lease.lastError ? `: ${lease.lastError}` : ''}`,
      };
    }
    return { ready: true, reason: null };
  }

  /** Monitoring view. */
  snapshot(): SnowflakeWorkerSnapshot {
    return {
      mode: this.mode,
      workerId: this.workerId,
      identity: this.plan.registry ? this.plan.registry.identity : this.mode,
      nodePath: this.binding ? this.binding.nodePath : null,
      stateFile: this.file.path,
      startedAt: this.startedAt,
      startupBound: this.plan.bound,
      startupBoundSource: this.plan.source,
      startupWaitMs: this.startupWaitMs,
      zookeeper: this.binding
        ? {
            connected: this.options.zk?.connected ?? false,
            verified: this.binding.verified,
            lastWriteAt: this.committer.lastRemoteWrite,
            alive: this.binding.aliveHeld,
            fenced: this.binding.fenced,
            horizon: this.committer.recordedHorizon,
          }
        : null,
      run: this.run,
      lockFile: this.lock.path,
      lease: this.lease.snapshot(),
      generator: this.generator.snapshot(),
    };
  }

  /**
   * Stops issuing, waits for an extension in flight and records the last millisecond used as
   * the final bound and horizon, so a graceful restart need not wait out the lease or the
   * runway; then deletes the liveness node, so a restart with the same identity need not wait
   * for the session to end; then releases the state lock. Never throws; does not close the
   * ZooKeeper client.
   */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.unsubscribe?.();
    this.unsubscribe = null;
    await this.verifying;
    await this.aliving;
    await this.lease.release(() => this.generator.lastIssuedTimestamp);
    if (this.binding?.aliveHeld) {
      await this.plan.alive?.releaseWithin(this.options.snowflake.heartbeatIntervalMs);
    }
    await this.lock.release();
  }

  private onZkState(state: ZkConnectionState): void {
    if (this.stopped) return;
    if (state === 'expired') {
      // ZooKeeper deleted the liveness node with the session: a successor may take the worker
      // ID from now on, so nothing is extended until the node is held again.
      this.binding?.sessionLost(
        'the ZooKeeper session that held the liveness node expired; the lease is not extended until the node is held again',
      );
    }
    if (state !== 'connected') {
      this.logger.warn(
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
      if (this.stopped || !this.binding?.available || this.lease.snapshot().revoked !== null)
        return;
      await this.lease.extendAfterCurrent();
      this.logger.log(
        `ZooKeeper connected; time lease of worker ${this.workerId} recorded in ${this.binding.nodePath}`,
      );
    } catch (error) {
      this.logger.warn(`Could not catch ZooKeeper up after reconnecting: ${String(error)}`);
    }
  }

  private verifyIfNeeded(): Promise<void> {
    const binding = this.binding;
    if (!binding || binding.verified || !this.options.zk?.connected) return Promise.resolve();
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
    const alive = this.plan.alive;
    const binding = this.binding;
    if (
      !alive ||
      !binding ||
      binding.aliveHeld ||
      this.stopped ||
      !binding.verified ||
      !this.options.zk?.connected
    ) {
      return Promise.resolve();
    }
    if (this.lease.snapshot().revoked !== null) return Promise.resolve();
    this.aliving ??= this.acquireAlive(alive, binding).finally(() => {
      this.aliving = null;
    });
    return this.aliving;
  }

  private async acquireAlive(alive: WorkerAliveNode, binding: ZkWorkerBinding): Promise<void> {
    const epoch = binding.sessionEpoch;
    let result: Awaited<ReturnType<WorkerAliveNode['acquire']>>;
    try {
      result = await zkWithin(
        alive.acquire(),
        this.options.snowflake.heartbeatIntervalMs,
        `creating ${alive.path}`,
      );
    } catch (error) {
      this.logger.warn(`Could not create the liveness node ${alive.path} yet: ${String(error)}`);
      return;
    }
    if (!result.acquired) {
      const holder = holderIdentity(result.holder);
      this.revoke(
        holder !== null && holder !== alive.identity
          ? `worker ID ${this.workerId} was taken over by ${holder} while this run's ZooKeeper session was gone (liveness node ${alive.path}: ${result.holder}); ` +
              'this run stops issuing (self-fencing); restart it to register or reclaim a worker ID'
          : `another live process holds worker ID ${this.workerId} for ${alive.identity} (liveness node ${alive.path}${result.holder ? `: ${result.holder}` : ''}); ` +
              'give each instance its own LEAF_SNOWFLAKE_ADVERTISE and restart this one',
      );
      return;
    }
    // While this run held no liveness node, another run may have taken the worker ID, issued
    // IDs and ended: its record in the worker node says so, and its horizon may still be ahead.
    const path = binding.nodePath!;
    let writer: string | undefined;
    try {
      writer = (
        await zkWithin(
          binding.registry.read(path),
          this.options.snowflake.heartbeatIntervalMs,
          `reading ${path}`,
        )
      ).run;
    } catch (error) {
      this.logger.warn(`Could not read the worker node ${path} yet: ${String(error)}`);
      return;
    }
    const expected = this.committer.wroteRemote ? this.run : this.knownNodeRun;
    if (writer !== expected) {
      this.revoke(
        `the worker node ${path} was written by another run (${writer ?? 'unknown'}) while this one held no liveness node: ` +
          'another process took worker ID ' +
          `${this.workerId} meanwhile and may still issue IDs; restart this instance (its start-up waits past the other run's horizon)`,
      );
      return;
    }
    // A create that raced with an expiry belonged to the old session: try again later.
    if (!binding.aliveAcquired(epoch)) return;
    this.logger.log(`Liveness node ${alive.path} created for worker ID ${this.workerId}`);
  }

  private revoke(reason: string): void {
    this.logger.error(`Snowflake worker stops issuing IDs: ${reason}`);
    this.lease.revoke(reason);
  }

  /**
   * The worker started from its state file while ZooKeeper was down: now that it is back,
   * make sure ZooKeeper still assigns this worker ID to this identity and records nothing the
   * start-up bound did not cover. If not, stop issuing for good: someone else may be
   * entitled to it, or may have issued IDs after the state file was written.
   */
  private async verify(binding: ZkWorkerBinding): Promise<void> {
    const registry = binding.registry;
    let found: { path: string; sequence: number } | null;
    try {
      found = await registry.find();
      // A worker ID this identity reclaimed sits in a node named for another identity.
      if ((found === null || found.sequence !== this.workerId) && this.plan.nodePath !== null)
        found = (await registry.heldAt(this.plan.nodePath, this.workerId)) ?? found;
    } catch (error) {
      this.logger.warn(
        `Could not confirm the worker registration in ZooKeeper yet: ${String(error)}`,
      );
      return;
    }
    if (found && found.sequence === this.workerId) {
      let data: Awaited<ReturnType<ZookeeperWorkerRegistry['read']>>;
      try {
        data = await registry.read(found.path);
      } catch (error) {
        this.logger.warn(`Could not read the worker node ${found.path} yet: ${String(error)}`);
        return;
      }
      const needed = startupBoundFromNode({
        path: found.path,
        data,
        created: false,
        cached: this.plan.cached,
        stateFile: this.file.path,
        localRunwayMs: this.options.snowflake.localRunwayMs,
      });
      if (needed.bound > this.plan.bound) {
        this.revoke(
          `ZooKeeper requires waiting past ${needed.bound} for worker ID ${this.workerId} (${needed.source}), ` +
            `later than the bound ${this.plan.bound} this instance started from (its state file is stale, or another run wrote the node); restart it`,
        );
        return;
      }
      this.knownNodeRun = data.run;
      binding.confirm(found.path, data.run);
      this.logger.log(
        `ZooKeeper confirms worker ID ${this.workerId} for ${registry.identity} (${found.path})`,
      );
      return;
    }
    this.revoke(
      found
        ? `ZooKeeper assigns worker ID ${found.sequence} (${found.path}) to ${registry.identity}, but this instance started from its state file with worker ID ${this.workerId}; restart it`
        : `ZooKeeper has no node for ${registry.identity} under ${registry.parent} any more, but this instance started from its state file with worker ID ${this.workerId}; restart it to register again`,
    );
  }
}

/** The `identity` in a liveness node's data, or `null` when unreadable. */
function holderIdentity(data: string | null): string | null {
  try {
    const identity = (JSON.parse(data ?? '') as { identity?: unknown }).identity;
    return typeof identity === 'string' ? identity : null;
  } catch {
    return null;
  }
}
