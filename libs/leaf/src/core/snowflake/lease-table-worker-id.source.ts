import { WorkerIdUnavailableError } from '../errors/worker-id-unavailable.error';
import { monotonicMs } from '../leaf-observer';
import { withTimeout } from '../with-timeout';
import { DatabaseLeaseCommitter } from './database-lease.committer';
import { snowflakeLayoutOf, type DatabaseWorkerSource } from './snowflake-settings';
import type { WorkerClaim, WorkerHolding, WorkerIdSource } from './worker-id-source.port';
import { tenureAt, type WorkerLeaseClaim, type WorkerLeaseStore } from './worker-lease-store.port';
import { leaseRowWorkerInfo, type SnowflakeWorkerInfo } from './worker-listing';
import type { StartContext, StartPlan } from './worker-start.plan';
import type { WorkerIdentity } from './worker-state';
import { messageOf } from '../errors/leaf.error';

/** Longest pause between two claims (every worker ID held, or the database failing). */
const FULL_RETRY_MAX_MS = 1000;
/** First pause after a failed claim; doubles up to {@link FULL_RETRY_MAX_MS}. */
const FIRST_RETRY_MS = 100;

/**
 * {@link WorkerIdSource} on a lease table ({@link WorkerLeaseStore}, docs/design.md, "The
 * database variant"): a row claimed at start, renewed by the heartbeat, released at stop.
 */
export class LeaseTableWorkerIdSource implements WorkerIdSource {
  constructor(
    private readonly settings: Omit<DatabaseWorkerSource, 'kind'>,
    readonly kind = 'database',
  ) {}

  /** The lease table's store. */
  get store(): WorkerLeaseStore {
    return this.settings.store;
  }

  describe(): string {
    return `on the database (${this.store.description}, holder ${this.settings.holder})`;
  }

  identity(name: string): WorkerIdentity {
    return { kind: 'database', name, holder: this.settings.holder };
  }

  /**
   * Claims a lease row (docs/design.md, "The database variant"), then bounds the start by the
   * horizon the row recorded (its previous holder's last millisecond) and, when this host's
   * state file records the same worker ID, by the file's lease too. While every worker ID is
   * held by a live lease, claims again until one expires, within `startupMaxWaitMs`; a claim
   * that fails (the database not answering yet) is retried too.
   * @throws {WorkerIdUnavailableError} the database failed or did not answer, or no worker ID
   *   became free, within `startupMaxWaitMs` (nothing falls back to the state file: only the
   *   row knows the holder).
   */
  async claim({ options, file, logger, run }: StartContext): Promise<WorkerClaim> {
    const { store, holder, marginMs, callTimeoutMs } = this.settings;
    const sf = options.snowflake;
    const clock = options.clock;
    const cache = await file.read();
    if (cache.status === 'corrupt')
      logger.warn(`${cache.error.message} The file is ignored and rewritten.`);
    const request = {
      name: options.name,
      holder,
      run,
      leaseMs: sf.leaseMs,
      maxWorkerId: snowflakeLayoutOf(sf).maxWorkerId,
      journal: this.settings.journal ?? null,
    };
    const startedAt = clock.now();
    let lease: WorkerLeaseClaim | null = null;
    let failure: string | null = null;
    let retryMs = FIRST_RETRY_MS;
    let slept = false;
    while (lease === null) {
      let pause: number;
      try {
        const answer = await withTimeout(store.claim(request), callTimeoutMs);
        if (!answer.ok) throw new Error(`no answer within ${callTimeoutMs} ms`);
        if ('claimed' in answer.value) {
          lease = answer.value.claimed;
          break;
        }
        failure = null;
        pause = Math.min(answer.value.retryInMs, FULL_RETRY_MAX_MS);
      } catch (error) {
        // A database that does not answer yet (the app connects in the background) is waited
        // for, within the start-up wait; the first failure is logged at once.
        const reason = messageOf(error);
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
    if (slept)
      logger.log(
        `Waited ${clock.now() - startedAt} ms to claim a worker ID in ${store.description}`,
      );
    const previous = lease.previous;
    const state =
      cache.status === 'ok' && cache.state.workerId === lease.workerId ? cache.state : null;
    const rowBound = previous ? previous.horizon : Number.NEGATIVE_INFINITY;
    const fileBound = state ? state.reservedUntil : Number.NEGATIVE_INFINITY;
    const plan: StartPlan = {
      workerId: lease.workerId,
      bound: Math.max(rowBound, fileBound, clock.now() - 1),
      source:
        previous === null
          ? 'a new lease row'
          : fileBound > rowBound
            ? `state file ${file.path}`
            : `the lease row's horizon (last held by ${previous.holder}, epoch ${previous.epoch})`,
      cached: state,
    };
    const committer = new DatabaseLeaseCommitter(
      store,
      lease,
      file,
      {
        leaseMs: sf.leaseMs,
        marginMs,
        callTimeoutMs,
        monotonic: options.monotonic ?? monotonicMs,
        now: () => clock.now(),
      },
      logger,
      previous?.horizon ?? 0,
    );
    return {
      plan,
      committer,
      started: (worker) => {
        committer.onLost = (reason) => worker.lease.revoke(reason);
      },
      // After a stop the committer's final release gave the row back already.
      release: async (refused) => {
        // Nothing was issued: the row keeps at least the horizon it had (plan.bound ≥ it).
        if (refused)
          await withTimeout(store.release(lease, plan.bound), callTimeoutMs).catch(() => undefined);
      },
      snapshot: () => ({
        identity: holder,
        nodePath: null,
        zookeeper: null,
        database: {
          store: store.description,
          holder,
          epoch: String(lease.epoch),
          lastRenewalAt: committer.lastRenewal,
          horizon: committer.recordedHorizon,
          lost: committer.lostReason,
        },
      }),
    };
  }

  async holderAt(name: string, workerId: number, timestampMs: number): Promise<WorkerHolding> {
    const store = this.store;
    const claims = store.claimsOf ? await store.claimsOf(name, workerId) : [];
    const tenure = tenureAt(claims, timestampMs);
    if (!tenure) {
      return {
        unknown: this.settings.journal
          ? `no journalled claim of worker ID ${workerId} covers ${new Date(timestampMs).toISOString()}`
          : 'the ID journal is off here (option journal)',
      };
    }
    const { claim } = tenure;
    return {
      instance: claim.instance,
      holder: claim.holder,
      run: claim.run,
      epoch: claim.epoch,
      claimedAt: new Date(claim.claimedAt),
      until: tenure.untilMs === null ? null : new Date(tenure.untilMs),
      note: null,
    };
  }

  async list(name: string, now: number): Promise<SnowflakeWorkerInfo[]> {
    return (await this.store.list(name)).map((row) => leaseRowWorkerInfo(row, name, now));
  }

  async close(): Promise<void> {}
}
