import type { LeaseCommitter } from './time-lease';
import type { AssembledWorker } from './worker-start.assembly';
import type { StartContext, StartPlan } from './worker-start.plan';
import type { SnowflakeWorkerInfo } from './worker-listing';
import type { WorkerIdentity } from './worker-state';

/**
 * Port: where a snowflake worker's ID comes from and what keeps it its own (docs/design.md,
 * "Coordination ports"). Adapters: ZooKeeper (`adapters/zookeeper`), the `leaf_worker_lease`
 * rows (`adapters/typeorm`), in memory (`testing/`), and the local ones of `core/` (an
 * explicit ID, a StatefulSet ordinal).
 */
export interface WorkerIdSource {
  /** How the worker ID is assigned (`zookeeper`, `database`, ...), for display and records only. */
  readonly kind: string;
  /** Where the worker ID comes from, in words, for the start-up log (`on ZooKeeper`). */
  describe(): string;
  /** The identity whose state file start-up locks. */
  identity(name: string): WorkerIdentity;
  /**
   * Claims a worker ID under the state file's lock: the ID and the bound start-up waits past.
   * @throws {WorkerIdUnavailableError}, {@link WorkerIdExhaustedError}, {@link WorkerIdInUseError}, {@link WorkerStateCorruptError}
   */
  claim(context: StartContext): Promise<WorkerClaim>;
  /** Opens its connection for a tool that only lists (a worker's claim opens it itself). */
  open?(): Promise<void>;
  /** Every worker ID of namespace `name`, for operators; none where the source keeps no list. */
  list(name: string, now: number): Promise<SnowflakeWorkerInfo[]>;
  /**
   * Who held `workerId` of namespace `name` when it issued the IDs of millisecond
   * `timestampMs` (docs/operations.md, "Who issued an ID"), or why that is not known.
   */
  holderAt(name: string, workerId: number, timestampMs: number): Promise<WorkerHolding>;
  /** Closes what the source opened (its client). Never throws. */
  close(): Promise<void>;
}

/** The claimed worker ID, from start-up to stop. */
export interface WorkerClaim {
  readonly plan: StartPlan;
  /** What the time lease renews the claim through (once the clock passed the bound). */
  readonly committer: LeaseCommitter;
  /** The worker is assembled: its lease is revoked when the claim is lost. */
  started?(worker: AssembledWorker): void;
  /** Before each extension (a heartbeat): catch up with the coordinator. */
  beforeExtend?(): Promise<void>;
  /** Stops following the coordinator, before the lease's final release. Never throws. */
  stop?(): Promise<void>;
  /**
   * Gives the worker ID back at once, after the final release or on a refused start (nothing
   * issued: the claim keeps at least its bound). Never throws.
   */
  release(refused: boolean): Promise<void>;
  /** What monitoring shows of the claim. */
  snapshot(): WorkerClaimSnapshot;
}

/** The source's part of a worker's monitoring view (`SnowflakeWorkerSnapshot`). */
export interface WorkerClaimSnapshot {
  /** `ip:port` with ZooKeeper, `embedded` otherwise. */
  readonly identity: string;
  readonly nodePath: string | null;
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
  /** `null` unless the worker ID is leased from the database. */
  readonly database: {
    /** Where the lease row lives. */
    readonly store: string;
    /** The identity recorded in the row. */
    readonly holder: string;
    /** The row's fencing counter this run claimed. */
    readonly epoch: string;
    /** Wall time the last successful renewal was sent. */
    readonly lastRenewalAt: number | null;
    /** The horizon this run last recorded in the row. */
    readonly horizon: number;
    /** Why the lease is lost for good (another instance claimed the worker ID), or `null`. */
    readonly lost: string | null;
  } | null;
}

/** What {@link WorkerIdSource.holderAt} knows (the whois answer's fields), or why nothing. */
export type WorkerHolding =
  | {
      /** The holder's instance identity (the journal's; ZooKeeper: the node's `ip:port`). */
      readonly instance?: string | null;
      readonly holder?: string | null;
      readonly run?: string | null;
      readonly epoch?: bigint | null;
      readonly claimedAt?: Date | null;
      readonly until?: Date | null;
      /** What the answer rests on, in words. */
      readonly note?: string | null;
    }
  | { readonly unknown: string };
