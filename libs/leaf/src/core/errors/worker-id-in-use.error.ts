import { LeafError, LeafErrorCode } from './leaf.error';

/**
 * Another live process holds this worker ID: it advertises the same `ip:port` identity
 * (a shared default address such as docker0's 172.17.0.1, or a host name copied across
 * replicas), so both would reuse the same ZooKeeper node and issue duplicate IDs. Its
 * liveness node `/snowflake/{name}/alive/{workerId}` did not disappear within the session
 * timeout, as it would for a crashed predecessor; we refuse to start.
 */
export class WorkerIdInUseError extends LeafError {
  readonly code = LeafErrorCode.WORKER_ID_IN_USE;

  constructor(
    /** The worker ID held by the other process. */
    readonly workerId: number,
    /** The `ip:port` identity both processes advertise. */
    readonly identity: string,
    /** Path of the liveness node. */
    readonly alivePath: string,
    /** What the liveness node says about its holder (its data), when it could be read. */
    readonly holder: string | null,
    /** How long start-up waited for the node to disappear. */
    readonly waitedMs: number,
  ) {
    super(
      `Another live process holds snowflake worker ID ${workerId} for identity ${identity}: its liveness node ${alivePath}` +
        `${holder ? ` (${holder})` : ''} still exists after ${waitedMs} ms, longer than a crashed process's ZooKeeper session lasts. ` +
        'Two processes advertising the same ip:port would issue duplicate IDs, so this one refuses to start. ' +
        'Fix: give each instance its own LEAF_SNOWFLAKE_ADVERTISE (its own reachable address and port, not a shared default such as 172.17.0.1 or a copied host name); ' +
        "if the other process is this instance's previous run, stop it, or restart once its session timed out.",
    );
  }
}
