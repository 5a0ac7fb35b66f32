import type { Clock } from '../common/clock';
import { withTimeout } from '../common/with-timeout';
import { StartupClockBehindError } from '../errors/startup-clock-behind.error';
import { WorkerIdExhaustedError } from '../errors/worker-id-exhausted.error';
import { WorkerIdInUseError } from '../errors/worker-id-in-use.error';
import { WorkerIdUnavailableError } from '../errors/worker-id-unavailable.error';
import { WorkerStateCorruptError } from '../errors/worker-state-corrupt.error';
import type { ResolvedSnowflakeOptions } from '../leaf-options.interface';
import { ZkError, type ZkClient, type ZkConnectionState } from '../zookeeper/zk-client.interface';
import { waitUntilPast } from './clock-guard';
import { SnowflakeGenerator, type SnowflakeGeneratorSnapshot } from './snowflake-generator';
import { SNOWFLAKE_MAX_WORKER_ID, SnowflakeLayout } from './snowflake-layout';
import { silentSnowflakeLogger, type SnowflakeLogger } from './snowflake-logger';
import { TimeLease, type TimeLeaseSnapshot } from './time-lease';
import { WorkerAliveNode } from './worker-alive.node';
import { WorkerLeaseCommitter, type LeaseRemote } from './worker-lease.committer';
import { WorkerStateFile, type WorkerStateReadResult } from './worker-state.file';
import { ZookeeperWorkerRegistry, type WorkerRegistration } from './zookeeper-worker.registry';

/**
 * Nodes written by the Java Leaf carry only `timestamp`, refreshed every 3 s: such a worker
 * may have issued IDs up to one heartbeat after it.
 */
const LEGACY_LEAF_HEARTBEAT_MS = 3000;

/**
 * A liveness node found at start may be the one of this instance's crashed previous run:
 * ZooKeeper deletes it once that session times out. Start-up waits `sessionTimeoutMs` plus
 * this margin (ZooKeeper checks expiry once per tick) before it concludes that another live
 * process holds the worker ID.
 */
const ALIVE_WAIT_MARGIN_MS = 2000;
/** Pause between attempts to create the liveness node while another session holds it. */
const ALIVE_RETRY_MS = 500;

/** What a {@link SnowflakeWorker} needs to start. */
export interface SnowflakeWorkerOptions {
  /** The module's `name` (ZooKeeper namespace `/snowflake/{name}`). */
  readonly name: string;
  /** Resolved snowflake options. */
  readonly snowflake: ResolvedSnowflakeOptions;
  readonly clock: Clock;
  /** The ZooKeeper client; required when `snowflake.zookeeper` is set, ignored otherwise. The caller closes it. */
  readonly zk?: ZkClient | null;
  /** @default silent */
  readonly logger?: SnowflakeLogger;
  /** Random source for the sequence start. @default Math.random */
  readonly random?: () => number;
  /** See {@link SnowflakeGeneratorOptions.tickPollMs}. @default 2 */
  readonly tickPollMs?: number;
}

/** How the worker ID was assigned. */
export type SnowflakeWorkerMode = 'zookeeper' | 'embedded';

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
  } | null;
  readonly lease: TimeLeaseSnapshot;
  readonly generator: SnowflakeGeneratorSnapshot;
}

/** Whether the worker can issue an ID now, and if not, why. */
export interface SnowflakeReadiness {
  readonly ready: boolean;
  readonly reason: string | null;
}

interface StartPlan {
  readonly workerId: number;
  readonly nodePath: string | null;
  readonly bound: number;
  readonly source: string;
  readonly lastRemoteWriteAt: number | null;
  readonly verified: boolean;
  readonly file: WorkerStateFile;
  readonly registry: ZookeeperWorkerRegistry | null;
  /** The liveness node (with ZooKeeper), and whether start-up created it. */
  readonly alive: WorkerAliveNode | null;
  readonly aliveHeld: boolean;
}

/**
 * `promise`'s value if it settles within `ms`, else a `ZkError('TIMEOUT')` naming `what`:
 * every ZooKeeper step of the worker is bounded so a hung server cannot stall it.
 */
async function zkWithin<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  const result = await withTimeout(promise, ms);
  if (!result.ok) throw new ZkError('TIMEOUT', `${what} took longer than ${ms} ms`);
  return result.value;
}

/**
 * The worker's ZooKeeper node as the lease sees it: writable only while connected and once
 * the registration is confirmed (at start, or later when the worker started from its state
 * file while ZooKeeper was down).
 */
class ZkWorkerBinding implements LeaseRemote {
  constructor(
    private readonly zk: ZkClient,
    readonly registry: ZookeeperWorkerRegistry,
    public nodePath: string | null,
    public verified: boolean,
    private readonly timeoutMs: number,
  ) {}

  /**
   * Called when the worker's node turns out to be gone (deleted by hand, or ZooKeeper lost
   * its data): its sequence may be handed to a new instance at any moment, so the worker
   * must stop issuing at once instead of riding out the local runway.
   */
  onNodeGone: ((reason: string) => void) | null = null;

  get available(): boolean {
    return this.zk.connected && this.verified && this.nodePath !== null;
  }

  async write(reservedUntil: number, now: number): Promise<void> {
    const path = this.nodePath;
    if (path === null) throw new ZkError('NO_NODE', 'no worker node is bound yet');
    try {
      await zkWithin(
        this.registry.write(path, now, reservedUntil),
        this.timeoutMs,
        `writing ${path}`,
      );
    } catch (error) {
      if (error instanceof ZkError && error.zkCode === 'NO_NODE') {
        this.onNodeGone?.(
          `the worker node ${path} no longer exists in ZooKeeper, so the worker ID of ${this.registry.identity} may be reassigned; restart the instance to register again`,
        );
      }
      throw error;
    }
  }
}

/**
 * One snowflake worker: its worker ID, time lease and generator, and what keeps them
 * valid (ZooKeeper state changes, the heartbeat). Plain TypeScript, no Nest.
 *
 * Start-up ({@link SnowflakeWorker.start}):
 * 1. Worker ID: with ZooKeeper, register `ip:port` (reuse its node or create one); if
 *    ZooKeeper cannot be reached within `connectTimeoutMs`, start from the local state file
 *    (no file or an unusable one → refuse). Embedded: the configured ID.
 * 2. Bound = max(node `reservedUntil`, node `timestamp`, state file `reservedUntil`); with
 *    the node but no usable state file, also node `timestamp + localRunwayMs` (the previous
 *    run may have extended its lease locally while ZooKeeper was unreachable).
 * 3. Wait (up to `startupMaxWaitMs`) until the clock is past the bound, else refuse.
 * 4. Extend the lease once, durably, before the first ID; refuse if that fails.
 *
 * Liveness guard (with ZooKeeper): once the worker ID is known, the worker creates the
 * ephemeral node `/snowflake/{name}/alive/{workerId}`. If another session holds it and it
 * does not disappear within `sessionTimeoutMs` + a margin (a crashed previous run's would),
 * another live process advertises the same `ip:port`: start-up refuses
 * ({@link WorkerIdInUseError}). After a session expiry, or once ZooKeeper confirms a start
 * from the state file, the node is created again; if someone else holds it then, the lease
 * is revoked. A graceful stop deletes it.
 */
export class SnowflakeWorker {
  private unsubscribe: (() => void) | null = null;
  private verifying: Promise<void> | null = null;
  private stopped = false;
  /** Whether the current session holds the liveness node. */
  private aliveHeld: boolean;
  /** Bumped on every session expiry, so a create that raced with one is not trusted. */
  private aliveSession = 0;
  private aliving: Promise<void> | null = null;

  private constructor(
    private readonly options: SnowflakeWorkerOptions,
    private readonly logger: SnowflakeLogger,
    private readonly plan: StartPlan,
    private readonly binding: ZkWorkerBinding | null,
    private readonly committer: WorkerLeaseCommitter,
    /** The time lease. */
    readonly lease: TimeLease,
    /** The generator; issues IDs only within the lease. */
    readonly generator: SnowflakeGenerator,
    /** The bit layout (epoch) in use. */
    readonly layout: SnowflakeLayout,
    private readonly startedAt: number,
    private readonly startupWaitMs: number,
  ) {
    this.aliveHeld = plan.aliveHeld;
    const zk = options.zk;
    if (binding && zk) this.unsubscribe = zk.onStateChange((state) => this.onZkState(state));
  }

  /**
   * Assigns the worker ID, checks the clock against the persisted lease and extends it.
   * @throws {WorkerIdUnavailableError} ZooKeeper unreachable and no state file, or no ZooKeeper client given.
   * @throws {WorkerStateCorruptError} the state file (when needed) or the node data is unusable.
   * @throws {WorkerIdExhaustedError} the node's sequence is 1024 or more.
   * @throws {WorkerIdInUseError} another live process (same `ip:port`) holds the worker ID.
   * @throws {StartupClockBehindError} the clock did not pass the bound within `startupMaxWaitMs`.
   * @throws {TimeLeaseUnavailableError} the first extension could not be made durable.
   */
  static async start(options: SnowflakeWorkerOptions): Promise<SnowflakeWorker> {
    const logger = options.logger ?? silentSnowflakeLogger;
    const plan = options.snowflake.zookeeper
      ? await planZookeeper(options, logger)
      : await planEmbedded(options);
    try {
      return await SnowflakeWorker.startWith(options, logger, plan);
    } catch (error) {
      // Refused: let another start take the worker ID at once.
      if (plan.aliveHeld) await releaseAlive(plan.alive, options);
      throw error;
    }
  }

  private static async startWith(
    options: SnowflakeWorkerOptions,
    logger: SnowflakeLogger,
    plan: StartPlan,
  ): Promise<SnowflakeWorker> {
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
            sf.heartbeatIntervalMs,
          )
        : null;
    const committer = new WorkerLeaseCommitter(
      plan.file,
      binding,
      {
        workerId: plan.workerId,
        zkNode: plan.nodePath,
        localRunwayMs: sf.localRunwayMs,
        lastRemoteWriteAt: plan.lastRemoteWriteAt,
      },
      logger,
    );
    const lease = new TimeLease(plan.workerId, plan.bound, committer, clock, {
      leaseMs: sf.leaseMs,
      // Heartbeats normally keep the bound leaseMs ahead; renew from the hot path only when
      // one is late by half of the slack between them.
      renewBeforeMs: Math.max(1, Math.floor((sf.leaseMs - sf.heartbeatIntervalMs) / 2)),
      retryBackoffMs: Math.min(1000, sf.heartbeatIntervalMs),
    });
    if (binding) {
      binding.onNodeGone = (reason) => {
        logger.error(`Snowflake worker stops issuing IDs: ${reason}`);
        lease.revoke(reason);
      };
    }
    await lease.extend();
    const layout = new SnowflakeLayout(sf.epoch);
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
      },
      plan.bound,
    );
    const worker = new SnowflakeWorker(
      options,
      logger,
      plan,
      binding,
      committer,
      lease,
      generator,
      layout,
      clock.now(),
      wait.waitedMs,
    );
    logger.log(
      `Snowflake worker ${plan.workerId} started (${worker.mode}${plan.nodePath ? `, ${plan.nodePath}` : ''}); time lease until ${new Date(lease.reservedUntil).toISOString()}`,
    );
    return worker;
  }

  /** The worker ID. */
  get workerId(): number {
    return this.plan.workerId;
  }

  /** `zookeeper` or `embedded`. */
  get mode(): SnowflakeWorkerMode {
    return this.plan.registry ? 'zookeeper' : 'embedded';
  }

  /**
   * One heartbeat: confirms a pending registration if ZooKeeper is back, then extends the
   * lease to `now + leaseMs` (ZooKeeper node and state file).
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
      return { ready: false, reason: 'the timestamp no longer fits 41 bits' };
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
      identity: this.plan.registry ? this.plan.registry.identity : 'embedded',
      nodePath: this.binding ? this.binding.nodePath : null,
      stateFile: this.plan.file.path,
      startedAt: this.startedAt,
      startupBound: this.plan.bound,
      startupBoundSource: this.plan.source,
      startupWaitMs: this.startupWaitMs,
      zookeeper: this.binding
        ? {
            connected: this.options.zk?.connected ?? false,
            verified: this.binding.verified,
            lastWriteAt: this.committer.lastRemoteWrite,
            alive: this.aliveHeld,
          }
        : null,
      lease: this.lease.snapshot(),
      generator: this.generator.snapshot(),
    };
  }

  /**
   * Stops issuing, waits for an extension in flight and records the last millisecond used as
   * the final bound, so a graceful restart need not wait out the whole lease; then deletes
   * the liveness node, so a restart with the same identity need not wait for the session to
   * end. Never throws; does not close the ZooKeeper client.
   */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.unsubscribe?.();
    this.unsubscribe = null;
    await this.verifying;
    await this.aliving;
    await this.lease.release(() => this.generator.lastIssuedTimestamp);
    await releaseAlive(this.plan.alive, this.options);
    this.aliveHeld = false;
  }

  private onZkState(state: ZkConnectionState): void {
    if (this.stopped) return;
    if (state === 'expired') {
      // ZooKeeper deleted the liveness node with the session.
      this.aliveHeld = false;
      this.aliveSession++;
    }
    if (state !== 'connected') {
      this.logger.warn(
        state === 'expired'
          ? 'ZooKeeper session expired; a new session is being opened, the liveness node is created again and the heartbeat will resume on the same node'
          : 'ZooKeeper connection lost; the time lease is extended in the local state file only, within localRunwayMs',
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
      if (this.stopped || !this.binding?.verified || this.lease.snapshot().revoked !== null) return;
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
    if (
      !alive ||
      this.aliveHeld ||
      this.stopped ||
      !this.binding?.verified ||
      !this.options.zk?.connected
    ) {
      return Promise.resolve();
    }
    if (this.lease.snapshot().revoked !== null) return Promise.resolve();
    this.aliving ??= this.acquireAlive(alive).finally(() => {
      this.aliving = null;
    });
    return this.aliving;
  }

  private async acquireAlive(alive: WorkerAliveNode): Promise<void> {
    const session = this.aliveSession;
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
    if (result.acquired) {
      // A create that raced with an expiry belonged to the old session: try again later.
      if (session !== this.aliveSession) return;
      this.aliveHeld = true;
      this.logger.log(`Liveness node ${alive.path} created for worker ID ${this.workerId}`);
      return;
    }
    const reason =
      `another live process holds worker ID ${this.workerId} for ${alive.identity} (liveness node ${alive.path}${result.holder ? `: ${result.holder}` : ''}); ` +
      'give each instance its own LEAF_SNOWFLAKE_ADVERTISE and restart this one';
    this.logger.error(`Snowflake worker stops issuing IDs: ${reason}`);
    this.lease.revoke(reason);
  }

  /**
   * The worker started from its state file while ZooKeeper was down: now that it is back,
   * make sure ZooKeeper still assigns this worker ID to this identity. If not, stop issuing
   * for good: someone else may be entitled to it.
   */
  private async verify(binding: ZkWorkerBinding): Promise<void> {
    const registry = binding.registry;
    let found: { path: string; sequence: number } | null;
    try {
      found = await registry.find();
    } catch (error) {
      this.logger.warn(
        `Could not confirm the worker registration in ZooKeeper yet: ${String(error)}`,
      );
      return;
    }
    if (found && found.sequence === this.workerId) {
      // The state file this start trusted may be stale (a restored snapshot): if the node
      // records a later lease than the start-up bound, IDs since the start may repeat old ones.
      let recorded: number;
      try {
        const data = await registry.read(found.path);
        recorded = Math.max(data.timestamp, data.reservedUntil ?? data.timestamp);
      } catch (error) {
        this.logger.warn(`Could not read the worker node ${found.path} yet: ${String(error)}`);
        return;
      }
      if (recorded > this.plan.bound) {
        const reason = `ZooKeeper records a time lease up to ${recorded} for worker ID ${this.workerId}, later than the bound ${this.plan.bound} this instance started from (its state file is stale); restart it`;
        this.logger.error(`Snowflake worker stops issuing IDs: ${reason}`);
        this.lease.revoke(reason);
        return;
      }
      binding.nodePath = found.path;
      binding.verified = true;
      this.logger.log(
        `ZooKeeper confirms worker ID ${this.workerId} for ${registry.identity} (${found.path})`,
      );
      return;
    }
    const reason = found
      ? `ZooKeeper assigns worker ID ${found.sequence} (${found.path}) to ${registry.identity}, but this instance started from its state file with worker ID ${this.workerId}; restart it`
      : `ZooKeeper has no node for ${registry.identity} under ${registry.parent} any more, but this instance started from its state file with worker ID ${this.workerId}; restart it to register again`;
    this.logger.error(`Snowflake worker stops issuing IDs: ${reason}`);
    this.lease.revoke(reason);
  }
}

async function planEmbedded(options: SnowflakeWorkerOptions): Promise<StartPlan> {
  const sf = options.snowflake;
  const file = new WorkerStateFile(sf.stateDir, {
    kind: 'embedded',
    name: options.name,
    workerId: sf.workerId,
  });
  const cache = await file.read();
  if (cache.status === 'corrupt') throw cache.error;
  const state = cache.status === 'ok' ? cache.state : null;
  return {
    workerId: sf.workerId,
    nodePath: null,
    // No file: the first run of this worker ID here; nothing to wait for.
    bound: state ? state.reservedUntil : options.clock.now() - 1,
    source: state ? `state file ${file.path}` : 'no earlier run (no state file)',
    lastRemoteWriteAt: null,
    verified: true,
    file,
    registry: null,
    alive: null,
    aliveHeld: false,
  };
}

async function planZookeeper(
  options: SnowflakeWorkerOptions,
  logger: SnowflakeLogger,
): Promise<StartPlan> {
  const sf = options.snowflake;
  const zkOptions = sf.zookeeper!;
  const zk = options.zk;
  if (!zk)
    throw new WorkerIdUnavailableError(
      'snowflake.zookeeper is configured but no ZooKeeper client was provided',
    );
  if (!sf.advertise)
    throw new WorkerIdUnavailableError(
      'snowflake.advertise ("ip:port") is required with snowflake.zookeeper',
    );
  const { ip, port } = sf.advertise;
  const file = new WorkerStateFile(sf.stateDir, {
    kind: 'zookeeper',
    name: options.name,
    ip,
    port,
  });
  const registry = new ZookeeperWorkerRegistry(zk, options.name, ip, port, options.clock, logger);
  const cache = await file.read();

  let unreachable: ZkError | null = null;
  let registration: WorkerRegistration | null = null;
  let alive: WorkerAliveNode | null = null;
  try {
    await zk.connect(zkOptions.connectTimeoutMs);
    const registered = await zkWithin(
      registry.register(),
      zkOptions.connectTimeoutMs,
      `registering ${registry.identity}`,
    );
    if (registered.sequence > SNOWFLAKE_MAX_WORKER_ID) {
      throw new WorkerIdExhaustedError(registered.sequence, registered.path, registry.identity);
    }
    alive = new WorkerAliveNode(
      zk,
      options.name,
      registered.sequence,
      registry.identity,
      options.clock.now(),
    );
    const waited = await acquireAliveAtStart(alive, options, logger);
    // After a wait the holder may have extended the lease meanwhile: read the node again.
    registration = waited
      ? { ...registered, data: await registry.read(registered.path) }
      : registered;
  } catch (error) {
    // Only ZooKeeper's own failures lead to the state file; a refusal (exhausted, in use,
    // corrupt node data) is final. The state file path is time-checked like any other.
    if (!(error instanceof ZkError)) {
      await releaseAlive(alive, options);
      throw error;
    }
    unreachable = error;
    registration = null;
  }

  if (registration) {
    const { path, data, sequence } = registration;
    let bound: number;
    let source: string;
    if (registration.created) {
      // Created by this registration: no ID carries this worker ID yet.
      bound = data.timestamp - 1;
      source = `new node ${path}`;
    } else {
      const leased = data.reservedUntil ?? data.timestamp + LEGACY_LEAF_HEARTBEAT_MS;
      bound = Math.max(leased, data.timestamp);
      source =
        data.reservedUntil === undefined
          ? `node ${path} (written by the Java Leaf: timestamp + 3 s)`
          : `node ${path}`;
    }
    const cached = usableCache(cache, sequence, path, file, logger);
    if (cached) {
      if (cached.reservedUntil > bound) {
        bound = cached.reservedUntil;
        source = `state file ${file.path}`;
      }
    } else if (!registration.created && data.timestamp + sf.localRunwayMs > bound) {
      bound = data.timestamp + sf.localRunwayMs;
      source =
        `node ${path} timestamp + localRunwayMs (${sf.localRunwayMs} ms): the state file is missing or unusable, ` +
        'and the previous run may have extended its lease locally while ZooKeeper was unreachable';
    }
    return {
      workerId: sequence,
      nodePath: path,
      bound,
      source,
      lastRemoteWriteAt: Math.max(data.timestamp, cached?.zkSyncedAt ?? 0),
      verified: true,
      file,
      registry,
      alive,
      aliveHeld: true,
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
      'The registration is confirmed once ZooKeeper is back; until then the lease is extended locally within localRunwayMs.',
  );
  return {
    workerId: state.workerId,
    nodePath: state.zkNode,
    bound: state.reservedUntil,
    source: `state file ${file.path} (ZooKeeper unreachable)`,
    lastRemoteWriteAt: state.zkSyncedAt,
    verified: false,
    file,
    registry,
    // Created once ZooKeeper is back and confirms the registration.
    alive: new WorkerAliveNode(
      zk,
      options.name,
      state.workerId,
      registry.identity,
      options.clock.now(),
    ),
    aliveHeld: false,
  };
}

/** Deletes the liveness node if it is ours; skipped while disconnected, bounded in time. Never throws. */
async function releaseAlive(
  alive: WorkerAliveNode | null,
  options: SnowflakeWorkerOptions,
): Promise<void> {
  if (!alive || !options.zk?.connected) return;
  await withTimeout(alive.release(), options.snowflake.heartbeatIntervalMs);
}

/**
 * Creates the liveness node, waiting up to `sessionTimeoutMs` + a margin while another
 * session holds it (a crashed previous run's node disappears within that time).
 * @returns whether it had to wait.
 * @throws {WorkerIdInUseError} when the node is still held after the wait.
 * @throws {ZkError} when ZooKeeper fails.
 */
async function acquireAliveAtStart(
  alive: WorkerAliveNode,
  options: SnowflakeWorkerOptions,
  logger: SnowflakeLogger,
): Promise<boolean> {
  const zkOptions = options.snowflake.zookeeper!;
  const maxWaitMs = zkOptions.sessionTimeoutMs + ALIVE_WAIT_MARGIN_MS;
  let waitedMs = 0;
  for (;;) {
    const result = await zkWithin(
      alive.acquire(),
      zkOptions.connectTimeoutMs,
      `creating ${alive.path}`,
    );
    if (result.acquired) {
      if (waitedMs > 0)
        logger.log(
          `Liveness node ${alive.path} was released after ${waitedMs} ms; worker ID ${alive.workerId} is free`,
        );
      return waitedMs > 0;
    }
    if (waitedMs >= maxWaitMs) {
      throw new WorkerIdInUseError(
        alive.workerId,
        alive.identity,
        alive.path,
        result.holder,
        waitedMs,
      );
    }
    if (waitedMs === 0) {
      logger.warn(
        `Worker ID ${alive.workerId} for ${alive.identity} is held by another ZooKeeper session (${alive.path}${result.holder ? `: ${result.holder}` : ''}); ` +
          `waiting up to ${maxWaitMs} ms in case it is this instance's crashed previous run`,
      );
    }
    const pause = Math.min(ALIVE_RETRY_MS, maxWaitMs - waitedMs);
    await options.clock.sleep(pause);
    waitedMs += pause;
  }
}

/** The cached state if it describes the node ZooKeeper gave us; a mismatch is logged and ignored. */
function usableCache(
  cache: WorkerStateReadResult,
  workerId: number,
  path: string,
  file: WorkerStateFile,
  logger: SnowflakeLogger,
) {
  if (cache.status === 'ok') {
    if (cache.state.workerId === workerId && cache.state.zkNode === path) return cache.state;
    logger.warn(
      `State file ${file.path} records worker ${cache.state.workerId} (${cache.state.zkNode}) but ZooKeeper assigns ${workerId} (${path}); ZooKeeper wins and the file is rewritten`,
    );
  } else if (cache.status === 'corrupt') {
    logger.warn(
      `${cache.error.message} ZooKeeper is reachable, so the file is ignored and rewritten.`,
    );
  }
  return null;
}
