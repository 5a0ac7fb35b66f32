import { randomBytes } from 'node:crypto';
import { StartupClockBehindError } from '../errors/startup-clock-behind.error';
import { WorkerIdUnavailableError } from '../errors/worker-id-unavailable.error';
import { waitUntilPast } from './clock-guard';
import { SnowflakeGenerator } from './snowflake-generator';
import type { SnowflakeLayout } from './snowflake-layout';
import { silentSnowflakeLogger, type SnowflakeLogger } from './snowflake-logger';
import { snowflakeLayoutOf } from './snowflake-settings';
import type { SnowflakeWorkerOptions } from './snowflake-worker.options';
import { monotonicMs } from '../leaf-observer';
import { withTimeout } from '../with-timeout';
import { DatabaseLeaseCommitter } from './database-lease.committer';
import { planDatabase } from './database-worker.plan';
import { TimeLease, type LeaseCommitter } from './time-lease';
import { WorkerLeaseCommitter } from './worker-lease.committer';
import {
  planEmbedded,
  planZookeeper,
  type StartContext,
  type StartPlan,
} from './worker-start.plan';
import type { WorkerStateLockHandle, WorkerStateStore } from './worker-state';
import { ZkWorkerBinding } from './zk-worker.binding';
import { OrdinalWorkerRegistry } from './zookeeper-worker.registry';

/** The parts of a started snowflake worker, as {@link assembleWorker} put them together. */
export interface AssembledWorker {
  readonly options: SnowflakeWorkerOptions;
  readonly logger: SnowflakeLogger;
  readonly plan: StartPlan;
  /** The state file, held under {@link AssembledWorker.lock} for the worker's whole life. */
  readonly file: WorkerStateStore;
  readonly lock: WorkerStateLockHandle;
  /** The worker's hold on its ZooKeeper node; `null` without ZooKeeper. */
  readonly binding: ZkWorkerBinding | null;
  readonly committer: WorkerLeaseCommitter | DatabaseLeaseCommitter;
  /** The time lease, extended once, durably. */
  readonly lease: TimeLease;
  /** The generator; issues IDs only within the lease. */
  readonly generator: SnowflakeGenerator;
  /** The bit layout (epoch) in use. */
  readonly layout: SnowflakeLayout;
  /** This run's random id. */
  readonly run: string;
  readonly startedAt: number;
  /** How long start-up waited for the clock to pass the bound. */
  readonly startupWaitMs: number;
}

/**
 * The start-up composition of `SnowflakeWorker.start` (steps 1 to 5 of its doc): locks the
 * state file, plans the worker ID (embedded, ordinal or ZooKeeper), waits for the clock to
 * pass the bound, then binds the node, the lease committer, the lease (extended once) and
 * the generator. A refused start releases the liveness node and the lock it took.
 * @throws the errors `SnowflakeWorker.start` lists.
 */
export async function assembleWorker(options: SnowflakeWorkerOptions): Promise<AssembledWorker> {
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
      : source.kind === 'database'
        ? { kind: 'database', name: options.name, holder: source.holder }
        : { kind: 'embedded', name: options.name, workerId: source.workerId },
  );
  const run = randomBytes(8).toString('hex');
  const lock = await file.lock(options.clock.now());
  const context: StartContext = { options, logger, file, run };
  let plan: StartPlan | null = null;
  try {
    plan =
      source.kind === 'database'
        ? await planDatabase(context, source)
        : source.kind !== 'zookeeper' && zkSource === null
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
    return await assembleWith(context, lock, plan);
  } catch (error) {
    // Refused: let another start take the worker ID at once.
    if (plan?.aliveHeld) await plan.alive?.releaseWithin(sf.heartbeatIntervalMs);
    if (plan?.claim && source.kind === 'database') {
      // Nothing was issued: the row keeps at least the horizon it had (plan.bound ≥ it).
      await withTimeout(source.store.release(plan.claim, plan.bound), source.callTimeoutMs).catch(
        () => undefined,
      );
    }
    await lock.release();
    throw error;
  }
}

async function assembleWith(
  context: StartContext,
  lock: WorkerStateLockHandle,
  plan: StartPlan,
): Promise<AssembledWorker> {
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
  const source = sf.workerSource;
  const committer =
    source.kind === 'database' && plan.claim
      ? new DatabaseLeaseCommitter(
          source.store,
          plan.claim,
          file,
          {
            leaseMs: sf.leaseMs,
            marginMs: source.marginMs,
            callTimeoutMs: source.callTimeoutMs,
            monotonic: options.monotonic ?? monotonicMs,
            now: () => clock.now(),
          },
          logger,
          plan.claim.previous?.horizon ?? 0,
        )
      : new WorkerLeaseCommitter(
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
  const lease = new TimeLease(plan.workerId, plan.bound, committer as LeaseCommitter, clock, {
    leaseMs: sf.leaseMs,
    // Heartbeats normally keep the bound leaseMs ahead; renew from the hot path only when
    // one is late by half of the slack between them.
    renewBeforeMs: Math.max(1, Math.floor((sf.leaseMs - sf.heartbeatIntervalMs) / 2)),
    retryBackoffMs: Math.min(1000, sf.heartbeatIntervalMs),
    observer: options.observer,
  });
  if (committer instanceof DatabaseLeaseCommitter)
    committer.onLost = (reason) => lease.revoke(reason);
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
  return {
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
    startedAt: clock.now(),
    startupWaitMs: wait.waitedMs,
  };
}
