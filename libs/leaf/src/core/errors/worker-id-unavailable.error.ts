import { LeafError, LeafErrorCode } from './leaf.error';

/**
 * No worker ID could be established safely: ZooKeeper was unreachable and there is no local
 * state file to fall back on, the registration failed, or the worker has not started.
 */
export class WorkerIdUnavailableError extends LeafError {
  readonly code = LeafErrorCode.WORKER_ID_UNAVAILABLE;
  override readonly retryAfterMs = 1000;
}
