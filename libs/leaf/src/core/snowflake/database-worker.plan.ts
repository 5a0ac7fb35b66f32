import { WorkerIdUnavailableError } from '../errors/worker-id-unavailable.error';
import { withTimeout } from '../with-timeout';
import { snowflakeLayoutOf, type DatabaseWorkerSource } from './snowflake-settings';
import type { WorkerLeaseClaim } from './worker-lease-store.port';
import type { StartContext, StartPlan } from './worker-start.plan';

/** Longest pause between two claims while every worker ID is held by a live lease. */
const FULL_RETRY_MAX_MS = 1000;

/**
 * Database mode (docs/design.md, "The database variant"): claims a lease row, then bounds the
 * start by the horizon the row recorded (its previous holder's last millisecond) and, when
 * this host's state file records the same worker ID, by the file's lease too. While every
 * worker ID is held by a live lease, claims again until one expires, within
 * `startupMaxWaitMs`.
 * @throws {WorkerIdUnavailableError} the database failed or did not answer, or no worker ID
 *   became free in time (nothing falls back to the state file: only the row knows the holder).
 */
export async function planDatabase(
  context: StartContext,
  source: DatabaseWorkerSource,
): Promise<StartPlan> {
  const { options, logger, file, run } = context;
  const sf = options.snowflake;
  const clock = options.clock;
  const store = source.store;
  const cache = await file.read();
  if (cache.status === 'corrupt')
    logger.warn(`${cache.error.message} The file is ignored and rewritten.`);
  const request = {
    name: options.name,
    holder: source.holder,
    run,
    leaseMs: sf.leaseMs,
    maxWorkerId: snowflakeLayoutOf(sf).maxWorkerId,
  };
  const startedAt = clock.now();
  let claim: WorkerLeaseClaim | null = null;
  while (claim === null) {
    let answer;
    try {
      answer = await withTimeout(store.claim(request), source.callTimeoutMs);
    } catch (error) {
      throw new WorkerIdUnavailableError(
        `Claiming a snowflake worker ID in ${store.description} failed (${error instanceof Error ? error.message : String(error)}). Fix: make the database reachable and run the migrations (leaf_worker_lease).`,
        { cause: error },
      );
    }
    if (!answer.ok) {
      throw new WorkerIdUnavailableError(
        `Claiming a snowflake worker ID in ${store.description} did not answer within ${source.callTimeoutMs} ms`,
      );
    }
    if ('claimed' in answer.value) {
      claim = answer.value.claimed;
      break;
    }
    const pause = Math.min(answer.value.retryInMs, FULL_RETRY_MAX_MS);
    if (clock.now() - startedAt + pause > sf.startupMaxWaitMs) {
      throw new WorkerIdUnavailableError(
        `Every snowflake worker ID 0..${request.maxWorkerId} of "${options.name}" is held by a live lease in ${store.description}, and none expired within ${sf.startupMaxWaitMs} ms. ` +
          'Fix: stop instances you no longer need, or use a layout with more worker bits.',
      );
    }
    await clock.sleep(pause);
  }

  const waited = clock.now() - startedAt;
  if (waited > 0)
    logger.log(
      `Waited ${waited} ms for a worker ID to be free in ${store.description} (every one was held by a live lease)`,
    );
  const previous = claim.previous;
  const state =
    cache.status === 'ok' && cache.state.workerId === claim.workerId ? cache.state : null;
  const rowBound = previous ? previous.horizon : Number.NEGATIVE_INFINITY;
  const fileBound = state ? state.reservedUntil : Number.NEGATIVE_INFINITY;
  const bound = Math.max(rowBound, fileBound, clock.now() - 1);
  const source_ =
    previous === null
      ? 'a new lease row'
      : fileBound > rowBound
        ? `state file ${file.path}`
        : `the lease row's horizon (last held by ${previous.holder}, epoch ${previous.epoch})`;
  return {
    workerId: claim.workerId,
    nodePath: null,
    bound,
    source: source_,
    remote: null,
    verified: true,
    registry: null,
    alive: null,
    aliveHeld: false,
    cached: state,
    nodeRun: undefined,
    nodeVersion: null,
    claim,
  };
}
