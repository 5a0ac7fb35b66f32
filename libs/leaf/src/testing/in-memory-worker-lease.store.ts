import type { Clock } from '../core/clock';
import {
  chooseWorkerLease,
  claimedWorkerLease,
  type HeldWorkerLease,
  type WorkerLeaseClaimRequest,
  type WorkerLeaseClaimResult,
  type WorkerLeaseJournalRow,
  type WorkerLeaseRow,
  type WorkerLeaseStore,
} from '../core/snowflake/worker-lease-store.port';
import { InMemoryFaults } from './in-memory-faults';

/**
 * `leaf_worker_lease` in memory, on `clock` as the database's clock, with the semantics of
 * the TypeORM store (claims serialised, renewals and releases conditional on run and epoch).
 * {@link stall} holds every call until {@link resume} (a database that stalls; the calls are
 * then applied in order, as late answers); {@link failWith} makes calls fail.
 */
export class InMemoryWorkerLeaseStore extends InMemoryFaults implements WorkerLeaseStore {
  readonly description = 'in-memory leaf_worker_lease';
  /** `name/workerId` → the namespace and its row. */
  private readonly rows = new Map<string, { name: string; row: WorkerLeaseRow }>();
  /** The ID journal's claims, `name/workerId` → oldest first. */
  private readonly claims = new Map<string, WorkerLeaseJournalRow[]>();

  constructor(private readonly clock: Clock) {
    super();
  }

  /** Writes `row` of namespace `name` as it is (test set-up). */
  seed(name: string, row: WorkerLeaseRow): void {
    this.put(name, row);
  }

  async claim(request: WorkerLeaseClaimRequest): Promise<WorkerLeaseClaimResult> {
    await this.gate();
    const now = this.clock.now();
    // No await from here on: the read and the write are one step, as under the row locks.
    const rows = this.rowsOf(request.name);
    const choice = chooseWorkerLease(rows, request.holder, now, request.maxWorkerId);
    if (choice.kind === 'full') return { full: true, retryInMs: choice.retryInMs };
    const claimed = claimedWorkerLease(choice, request);
    const { workerId, epoch, previous } = claimed;
    this.put(request.name, {
      workerId,
      holder: request.holder,
      run: request.run,
      epoch,
      expiresAt: now + request.leaseMs,
      horizon: previous?.horizon ?? 0,
    });
    if (request.journal) {
      const key = `${request.name}/${workerId}`;
      this.claims.set(key, [
        ...(this.claims.get(key) ?? []),
        {
          workerId,
          epoch,
          holder: request.holder,
          run: request.run,
          instance: request.journal.instance,
          claimedAt: now,
          afterMs: previous ? previous.horizon : null,
        },
      ]);
    }
    return { claimed };
  }

  async renew(lease: HeldWorkerLease, leaseMs: number, horizon: number): Promise<boolean> {
    await this.gate();
    const row = this.held(lease);
    if (!row) return false;
    this.put(lease.name, {
      ...row,
      expiresAt: this.clock.now() + leaseMs,
      horizon: Math.max(row.horizon, horizon),
    });
    return true;
  }

  async release(lease: HeldWorkerLease, horizon: number): Promise<boolean> {
    await this.gate();
    const row = this.held(lease);
    if (!row) return false;
    this.put(lease.name, { ...row, expiresAt: this.clock.now(), horizon });
    return true;
  }

  async list(name: string): Promise<WorkerLeaseRow[]> {
    return this.rowsOf(name);
  }

  async claimsOf(name: string, workerId: number): Promise<WorkerLeaseJournalRow[]> {
    return [...(this.claims.get(`${name}/${workerId}`) ?? [])];
  }

  private rowsOf(name: string): WorkerLeaseRow[] {
    return [...this.rows.values()]
      .filter((entry) => entry.name === name)
      .map((entry) => entry.row)
      .sort((a, b) => a.workerId - b.workerId);
  }

  private held(lease: HeldWorkerLease): WorkerLeaseRow | null {
    const row = this.rows.get(`${lease.name}/${lease.workerId}`)?.row;
    return row && row.run === lease.run && row.epoch === lease.epoch ? row : null;
  }

  private put(name: string, row: WorkerLeaseRow): void {
    this.rows.set(`${name}/${row.workerId}`, { name, row });
  }
}
