import { randomBytes } from 'node:crypto';
import { StartupClockBehindError } from '../errors/startup-clock-behind.error';
import { waitUntilPast } from './clock-guard';
import { SnowflakeGenerator } from './snowflake-generator';
import type { SnowflakeLayout } from './snowflake-layout';
import { silentSnowflakeLogger } from './snowflake-logger';
import { snowflakeLayoutOf } from './snowflake-settings';
import type { SnowflakeWorkerOptions } from './snowflake-worker.options';
import { RegionCappedCommitter } from './region-capped.committer';
import { TimeLease } from './time-lease';
import type { WorkerClaim } from './worker-id-source.port';
import type { StartContext, StartPlan } from './worker-start.plan';
import type { WorkerStateLockHandle } from './worker-state';

/** The parts of a started snowflake worker, as {@link assembleWorker} put them together. */
export interface AssembledWorker extends StartContext {
  readonly plan: StartPlan;
  /** The worker ID as its source holds it: renewal, session, release. */
  readonly claim: WorkerClaim;
  /** The state file's lock, held for the worker's whole life. */
  readonly lock: WorkerStateLockHandle;
  /** The time lease, extended once, durably. */
  readonly lease: TimeLease;
  /** The generator; issues IDs only within the lease. */
  readonly generator: SnowflakeGenerator;
  /** The bit layout (epoch) in use. */
  readonly layout: SnowflakeLayout;
  readonly startedAt: number;
  /** How long start-up waited for the clock to pass the bound. */
  readonly startupWaitMs: number;
  /** The bound the clock had to pass: the plan's, or the region lease's floor above it. */
  readonly startBound: number;
  readonly startBoundSource: string;
}

/**
 * The start-up composition of `SnowflakeWorker.start` (steps 1 to 5 of its doc): locks the
 * state file, claims the worker ID from `options.source`, waits for the clock to pass the
 * bound, then builds the lease (through the claim's committer, extended once) and the
 * generator. A refused start gives the claim back and releases the lock.
 * @throws the errors `SnowflakeWorker.start` lists.
 */
export async function assembleWorker(options: SnowflakeWorkerOptions): Promise<AssembledWorker> {
  const logger = options.logger ?? silentSnowflakeLogger;
  const file = options.stateStore(options.source.identity(options.name));
  const run = randomBytes(8).toString('hex');
  const lock = await file.lock(options.clock.now());
  const context: StartContext = { options, logger, file, run };
  let claim: WorkerClaim | null = null;
  try {
    claim = await options.source.claim(context);
    return await assembleWith(context, lock, claim);
  } catch (error) {
    // Refused: let another start take the worker ID at once.
    await claim?.release(true);
    await lock.release();
    throw error;
  }
}

async function assembleWith(
  context: StartContext,
  lock: WorkerStateLockHandle,
  claim: WorkerClaim,
): Promise<AssembledWorker> {
  const { options, logger } = context;
  const { plan } = claim;
  const sf = options.snowflake;
  const clock = options.clock;
  const region = options.region ?? null;
  // Another region's IDs with this data-centre ID end at the floor: start past it too.
  const fromRegion = region !== null && region.floor > plan.bound;
  const bound = fromRegion ? region.floor : plan.bound;
  const boundSource = fromRegion
    ? `the horizon of the data-centre ID's previous region (${region.settings.dataCenterId})`
    : plan.source;
  const wait = await waitUntilPast(clock, bound, sf.startupMaxWaitMs);
  if (!wait.ok) {
    throw new StartupClockBehindError(
      plan.workerId,
      bound,
      wait.now,
      wait.offsetMs,
      sf.startupMaxWaitMs,
      boundSource,
    );
  }
  if (wait.waitedMs > 0) {
    logger.log(
      `Waited ${wait.waitedMs} ms for the clock to pass the time lease of worker ${plan.workerId} (${boundSource})`,
    );
  }
  const committer = region ? new RegionCappedCommitter(claim.committer, region) : claim.committer;
  const lease = new TimeLease(plan.workerId, bound, committer, clock, {
    leaseMs: sf.leaseMs,
    // Heartbeats normally keep the bound leaseMs ahead; renew from the hot path only when
    // one is late by half of the slack between them.
    renewBeforeMs: Math.max(1, Math.floor((sf.leaseMs - sf.heartbeatIntervalMs) / 2)),
    retryBackoffMs: Math.min(1000, sf.heartbeatIntervalMs),
    observer: options.observer,
  });
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
    bound,
  );
  const worker: AssembledWorker = {
    ...context,
    plan,
    claim,
    lock,
    lease,
    generator,
    layout,
    startedAt: clock.now(),
    startupWaitMs: wait.waitedMs,
    startBound: bound,
    startBoundSource: boundSource,
  };
  claim.started?.(worker);
  region?.onLost((reason) => lease.revoke(reason));
  await lease.extend();
  return worker;
}
