import type { Clock } from '../clock';
import type { LeafObserver } from '../leaf-observer';
import type { RegionLease } from './region-lease';
import type { SnowflakeLogger } from './snowflake-logger';
import type { SnowflakeSettings } from './snowflake-settings';
import type { WorkerIdSource } from './worker-id-source.port';
import type { WorkerStateStoreFactory } from './worker-state';

/** What `SnowflakeWorker.start` needs. */
export interface SnowflakeWorkerOptions {
  /** The module's `name` (ZooKeeper namespace `/snowflake/{name}`). */
  readonly name: string;
  /** Resolved snowflake settings. */
  readonly snowflake: SnowflakeSettings;
  readonly clock: Clock;
  /** Where the worker ID comes from (an adapter of the port). The caller closes it. */
  readonly source: WorkerIdSource;
  /** The local state of an identity (the library's file store in `adapters/fs`). */
  readonly stateStore: WorkerStateStoreFactory;
  /** @default silent */
  readonly logger?: SnowflakeLogger;
  /** Told of lease extensions and clock steps back (metrics). @default none */
  readonly observer?: LeafObserver | null;
  /** Random source for the sequence start. @default Math.random */
  readonly random?: () => number;
  /** Monotonic milliseconds for the database lease's liveness. @default performance.now() */
  readonly monotonic?: () => number;
  /**
   * The region's lease on the data-centre ID, claimed already (docs/design.md, "Regions"):
   * the start waits past its floor and every time-lease bound is capped at its proof.
   * @default none (the data-centre ID assigned by hand)
   */
  readonly region?: RegionLease | null;
  /** See {@link SnowflakeGeneratorOptions.tickPollMs}. @default 2 */
  readonly tickPollMs?: number;
}
