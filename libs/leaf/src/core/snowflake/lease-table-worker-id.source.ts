import { monotonicMs } from '../leaf-observer';
import { withTimeout } from '../with-timeout';
import { DatabaseLeaseCommitter } from './database-lease.committer';
import { planDatabase } from './database-worker.plan';
import type { DatabaseWorkerSource } from './snowflake-settings';
import type { WorkerClaim, WorkerHolding, WorkerIdSource } from './worker-id-source.port';
import { tenureAt, type WorkerLeaseStore } from './worker-lease-store.port';
import { leaseRowWorkerInfo, type SnowflakeWorkerInfo } from './worker-listing';
import type { StartContext } from './worker-start.plan';
import type { WorkerIdentity } from './worker-state';

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

  /** @throws {WorkerIdUnavailableError} see {@link planDatabase} */
  async claim(context: StartContext): Promise<WorkerClaim> {
    const { options, file, logger } = context;
    const { store, holder, marginMs, callTimeoutMs } = this.settings;
    const plan = await planDatabase(context, { kind: 'database', ...this.settings });
    const sf = options.snowflake;
    const committer = new DatabaseLeaseCommitter(
      store,
      plan.claim,
      file,
      {
        leaseMs: sf.leaseMs,
        marginMs,
        callTimeoutMs,
        monotonic: options.monotonic ?? monotonicMs,
        now: () => options.clock.now(),
      },
      logger,
      plan.claim.previous?.horizon ?? 0,
    );
    const nothing = () => Promise.resolve();
    return {
      plan,
      committer: () => committer,
      started: (worker) => {
        committer.onLost = (reason) => worker.lease.revoke(reason);
      },
      beforeExtend: nothing,
      stop: nothing,
      // After a stop the committer's final release gave the row back already.
      release: async (refused) => {
        // Nothing was issued: the row keeps at least the horizon it had (plan.bound ≥ it).
        if (refused)
          await withTimeout(store.release(plan.claim, plan.bound), callTimeoutMs).catch(
            () => undefined,
          );
      },
      snapshot: () => ({
        identity: holder,
        nodePath: null,
        zookeeper: null,
        database: {
          store: store.description,
          holder,
          epoch: String(plan.claim.epoch),
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
