import { WorkerIdUnavailableError } from '../errors/worker-id-unavailable.error';
import { withTimeout } from '../with-timeout';
import { snowflakeLayoutOf, type DatabaseWorkerSource } from './snowflake-settings';
import type { WorkerLeaseClaim } from './worker-lease-store.port';
import type { StartContext, StartPlan } from './worker-start.plan';

/** A database claim's plan: the lease row claimed at start. */
export interface DatabaseStartPlan extends StartPlan {
  readonly claim: WorkerLeaseClaim;
}

/** Longest pause between two claims (every worker ID held, or the database failing). */
const FULL_RETRY_MAX_MS = 1000;
/** First pause after a failed claim; doubles up to {@link FULL_RETRY_MAX_MS}. */
const FIRST_RETRY_MS = 100;

/**
 * Database mode (docs/design.md, "The database variant"): claims a lease row, then bounds the
 * start by the horizon the row recorded (its previous holder's last millisecond) and, when
 * this host's state file records the same worker ID, by the file's lease too. While every
 * worker ID is held by a live lease, claims again until one expires, within
 * `startupMaxWaitMs`; a claim that fails (the database not answering yet) is retried too.
 * @throws {WorkerIdUnavailableError} the database failed or did not answer, or no worker ID
 *   became free, within `startupMaxWaitMs` (nothing falls back to the state file: only the
 *   row knows the holder).
 */
export async function planDatabase(
  context: StartContext,
  source: DatabaseWorkerSource,
): Promise<DatabaseStartPlan> {
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
    journal: source.journal ?? null,
  };
  const startedAt = clock.now();
  let claim: WorkerLeaseClaim | null = null;
  let failure: string | null = null;
  let retryMs = FIRST_RETRY_MS;
  let slept = false;
  while (claim === null) {
    let pause: number;
    try {
      const answer = await withTimeout(store.claim(request), source.callTimeoutMs);
      if (!answer.ok) throw new Error(`no answer within ${source.callTimeoutMs} ms`);
      if ('claimed' in answer.value) {
        claim = answer.value.claimed;
        break;
      }
      failure = null;
      pause = Math.min(answer.value.retryInMs, FULL_RETRY_MAX_MS);
    } catch (error) {
      // A database that does not answer yet (the app connects in the background) is waited
      // for, within the start-up wait; the first failure is logged at once.
      const reason = error instanceof Error ? error.message : String(error);
      if (failure === null)
        logger.warn(
          `Claiming a snowflake worker ID in ${store.description} failed (${reason}); retrying for up to ${sf.startupMaxWaitMs} ms`,
        );
      failure = reason;
      pause = retryMs;
      retryMs = Math.min(retryMs * 2, FULL_RETRY_MAX_MS);
    }
    if (clock.now() - startedAt + pause > sf.startupMaxWaitMs) {
      throw new WorkerIdUnavailableError(
        failure !== null
          ? `Claiming a snowflake worker ID in ${store.description} failed for ${sf.startupMaxWaitMs} ms (${failure}). Fix: make the database reachable and run the migrations (leaf_worker_lease).`
          : `Every snowflake worker ID 0..${request.maxWorkerId} of "${options.name}" is held by a live lease in ${store.description}, and none expired within ${sf.startupMaxWaitMs} ms. ` +
              'Fix: stop instances you no longer need, or use a layout with more worker bits.',
      );
    }
    await clock.sleep(pause);
    slept = true;
  }

  const waited = clock.now() - startedAt;
  if (slept) logger.log(`Waited ${waited} ms to claim a worker ID in ${store.description}`);
  const previous = claim.previous;
  const state =
    cache.status === 'ok' && cache.state.workerId === claim.workerId ? cache.state : null;
  const rowBound = previous ? previous.horizon : Number.NEGATIVE_INFINITY;
  const fileBound = state ? state.reservedUntil : Number.NEGATIVE_INFINITY;
  const bound = Math.max(rowBound, fileBound, clock.now() - 1);
  const boundSource =
    previous === null
      ? 'a new lease row'
      : fileBound > rowBound
        ? `state file ${file.path}`
        : `the lease row's horizon (last held by ${previous.holder}, epoch ${previous.epoch})`;
  return {
    workerId: claim.workerId,
    bound,
    source: boundSource,
    cached: state,
    claim,
  };
}
