/**
 * Port: the database's lease table of snowflake worker IDs, `leaf_worker_lease` (one row per
 * namespace and worker ID; docs/design.md, "The database variant"). The TypeORM adapter
 * implements it for MySQL/MariaDB and PostgreSQL. Times are milliseconds: `expiresAt` on the
 * database's clock, `horizon` on the holder's.
 */
export interface WorkerLeaseStore {
  /** Where the table lives, for logs and errors (`PostgreSQL leaf_worker_lease`). */
  readonly description: string;
  /**
   * In one transaction, with the namespace's rows locked: picks a worker ID with
   * {@link chooseWorkerLease} and writes holder, run, `expiresAt = database now + leaseMs`
   * and `epoch + 1` (a new row starts at epoch 1 and horizon 0).
   * @returns the claim, or `full` when every worker ID up to `maxWorkerId` is held by a live
   *   lease (with how long until the first one expires).
   * @throws the driver's error when the transaction failed (nothing was claimed).
   */
  claim(request: WorkerLeaseClaimRequest): Promise<WorkerLeaseClaimResult>;
  /**
   * `expiresAt = database now + leaseMs` and `horizon = max(horizon, horizon given)`, only
   * while the row still records `lease`'s run and epoch.
   * @returns false when it does not (another instance claimed the worker ID: the lease is lost).
   * @throws the driver's error (the update may or may not have been applied).
   */
  renew(lease: HeldWorkerLease, leaseMs: number, horizon: number): Promise<boolean>;
  /**
   * At shutdown, once nothing is issued any more: `horizon` = the last millisecond used and
   * `expiresAt` = database now, so a successor need not wait; only while run and epoch match.
   * @returns false when the row is no longer this lease's.
   */
  release(lease: HeldWorkerLease, horizon: number): Promise<boolean>;
  /** Every row of namespace `name` (operators, tests). */
  list(name: string): Promise<WorkerLeaseRow[]>;
  /**
   * The ID journal's claims of `workerId` in namespace `name`, oldest first (docs/design.md,
   * "The ID journal"). Stores without a journal leave it out.
   * @throws the driver's error when the journal cannot be read.
   */
  claimsOf?(name: string, workerId: number): Promise<WorkerLeaseJournalRow[]>;
}

/** One claim of a worker ID, as the ID journal (`leaf_worker_lease_journal`) records it. */
export interface WorkerLeaseJournalRow {
  readonly workerId: number;
  readonly epoch: bigint;
  /** The lease row's holder (`snowflake.advertise`). */
  readonly holder: string;
  readonly run: string;
  /** The claiming instance's identity (`LeafModuleOptions.instance`). */
  readonly instance: string;
  /** When it was claimed, on the database's clock (ms). */
  readonly claimedAt: number;
  /**
   * The predecessor's horizon, which this holder's IDs all come after (it starts past it);
   * `null` for a new row (no earlier holder).
   */
  readonly afterMs: number | null;
}

/** The claim whose holder issued the IDs of one millisecond, with when that tenure ended. */
export interface WorkerLeaseTenure {
  readonly claim: WorkerLeaseJournalRow;
  /**
   * The last millisecond this holder may have issued IDs in: the next claim's `afterMs`;
   * `null` while no later claim is journalled.
   */
  readonly untilMs: number | null;
}

/**
 * Who held a worker ID when it issued the IDs of millisecond `timestampMs`, from its
 * journalled claims (oldest first): the newest claim whose predecessor's horizon lies before
 * `timestampMs`. Exact, not a guess on clocks: every holder issues only after its
 * predecessor's horizon (it waits past it at start) and only up to its own horizon, which it
 * persists before use and its successor reads. `null` when no claim covers it (before the
 * first journalled claim that had a predecessor).
 */
export function tenureAt(
  claims: readonly WorkerLeaseJournalRow[],
  timestampMs: number,
): WorkerLeaseTenure | null {
  for (let i = claims.length - 1; i >= 0; i--) {
    const claim = claims[i]!;
    if (claim.afterMs === null || claim.afterMs < timestampMs) {
      return { claim, untilMs: claims[i + 1]?.afterMs ?? null };
    }
  }
  return null;
}

/** One row of `leaf_worker_lease`. */
export interface WorkerLeaseRow {
  readonly workerId: number;
  /** The identity of the instance that claimed it last (`host:port`). */
  readonly holder: string;
  /** That instance's run id. */
  readonly run: string;
  /** Fencing counter: +1 on every claim. */
  readonly epoch: bigint;
  /** End of the lease, on the database's clock. */
  readonly expiresAt: number;
  /** The last millisecond the holder may issue IDs in, persisted before it is used. */
  readonly horizon: number;
}

/** What {@link WorkerLeaseStore.claim} needs. */
export interface WorkerLeaseClaimRequest {
  /** The module's `name` (the namespace). */
  readonly name: string;
  readonly holder: string;
  readonly run: string;
  readonly leaseMs: number;
  /** The layout's largest worker ID. */
  readonly maxWorkerId: number;
  /**
   * The ID journal: with it the claim also writes its row of `leaf_worker_lease_journal`, in
   * the claim's transaction (a store without a journal ignores it).
   */
  readonly journal?: { readonly instance: string } | null;
}

/** The lease an instance holds: what renewals and the release are conditional on. */
export interface HeldWorkerLease {
  readonly name: string;
  readonly workerId: number;
  readonly run: string;
  readonly epoch: bigint;
}

/** What a claim won. */
export interface WorkerLeaseClaim extends HeldWorkerLease {
  /** The row as it was before this claim; `null` for a new row. */
  readonly previous: WorkerLeaseRow | null;
}

/** Outcome of {@link WorkerLeaseStore.claim}. */
export type WorkerLeaseClaimResult =
  { readonly claimed: WorkerLeaseClaim } | { readonly full: true; readonly retryInMs: number };

/** What {@link chooseWorkerLease} picked. */
export type WorkerLeaseChoice =
  | { readonly kind: 'update'; readonly row: WorkerLeaseRow }
  | { readonly kind: 'insert'; readonly workerId: number }
  | { readonly kind: 'full'; readonly retryInMs: number };

/**
 * The claim rule (docs/design.md, "The database variant"), given the namespace's rows and the
 * database's time: the lowest expired row this holder held last (a restart); else the lowest
 * expired row; else the lowest worker ID with no row (inserted); else nothing, with the time
 * until the first row expires. A live row is never taken, not even one recording this
 * holder: that may be another process advertising the same identity.
 */
export function chooseWorkerLease(
  rows: readonly WorkerLeaseRow[],
  holder: string,
  databaseNow: number,
  maxWorkerId: number,
): WorkerLeaseChoice {
  const usable = rows
    .filter((row) => row.workerId >= 0 && row.workerId <= maxWorkerId)
    .sort((a, b) => a.workerId - b.workerId);
  const expired = usable.filter((row) => row.expiresAt < databaseNow);
  const own = expired.find((row) => row.holder === holder);
  if (own) return { kind: 'update', row: own };
  if (expired.length > 0) return { kind: 'update', row: expired[0]! };
  const taken = new Set(rows.map((row) => row.workerId));
  for (let workerId = 0; workerId <= maxWorkerId; workerId++) {
    if (!taken.has(workerId)) return { kind: 'insert', workerId };
  }
  const first = Math.min(...usable.map((row) => row.expiresAt));
  return { kind: 'full', retryInMs: Math.max(1, first - databaseNow + 1) };
}

/** The lease `choice` wins for `request`: a new row at epoch 1, or the expired row's at its epoch + 1. */
export function claimedWorkerLease(
  choice: Exclude<WorkerLeaseChoice, { kind: 'full' }>,
  request: Pick<WorkerLeaseClaimRequest, 'name' | 'run'>,
): WorkerLeaseClaim {
  const previous = choice.kind === 'update' ? choice.row : null;
  const workerId = choice.kind === 'update' ? choice.row.workerId : choice.workerId;
  const epoch = (previous?.epoch ?? 0n) + 1n;
  return { name: request.name, workerId, run: request.run, epoch, previous };
}
