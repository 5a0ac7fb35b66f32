import type { SnowflakeWorkerInfo, WorkerAliveHolder } from 'nestjs-leaf/server';

/** A snowflake worker ID on the wire: shared by `GET /admin/workers` and `leaf workers`. */
export interface WorkerRowJson {
  workerId: number;
  /** `ip:port` the node was created for. */
  identity: string;
  /** Who holds the worker ID (or held it last): differs from `identity` once reclaimed. */
  heldBy: string | null;
  /** True while a live ZooKeeper session holds the liveness node. */
  alive: boolean;
  lastWrite: number | null;
  lastWriteIso: string | null;
  reservedUntil: number | null;
  reservedUntilIso: string | null;
  /** Until when its holder may issue IDs (with its local runway): a reclaim waits past it. */
  horizon: number | null;
  horizonIso: string | null;
  /** Whether the lease bound is still ahead of now (a holder may still issue up to it). */
  leaseActive: boolean;
  /** The liveness node's data (pid, run) while alive. */
  holder: WorkerAliveHolder | null;
  path: string;
  error: string | null;
}

/** The JSON of one worker ID, as seen at `now`. */
export function workerRowJson(worker: SnowflakeWorkerInfo, now: number): WorkerRowJson {
  const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
  return {
    workerId: worker.workerId,
    identity: worker.identity,
    heldBy: worker.holder,
    alive: worker.alive,
    lastWrite: worker.lastWrite,
    lastWriteIso: iso(worker.lastWrite),
    reservedUntil: worker.reservedUntil,
    reservedUntilIso: iso(worker.reservedUntil),
    horizon: worker.horizon,
    horizonIso: iso(worker.horizon),
    leaseActive: worker.reservedUntil !== null && worker.reservedUntil >= now,
    holder: worker.aliveHolder,
    path: worker.path,
    error: worker.error,
  };
}
