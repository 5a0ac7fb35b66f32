import type { Clock } from '../core/clock';
import { LeaseTableWorkerIdSource } from '../core/snowflake/lease-table-worker-id.source';
import { InMemoryWorkerLeaseStore } from './in-memory-worker-lease.store';

/**
 * The in-memory adapter of `WorkerIdSource`: worker IDs leased from an
 * {@link InMemoryWorkerLeaseStore}. Sources given one store are instances of one deployment.
 */
export class InMemoryWorkerIdSource extends LeaseTableWorkerIdSource {
  /**
   * @param holder this instance's identity in the lease rows
   * @param leases the rows; a new, empty store by default
   */
  constructor(
    clock: Clock,
    holder: string,
    readonly leases = new InMemoryWorkerLeaseStore(clock),
  ) {
    super({ store: leases, holder, marginMs: 1_000, callTimeoutMs: 2_000 }, 'memory');
  }
}
