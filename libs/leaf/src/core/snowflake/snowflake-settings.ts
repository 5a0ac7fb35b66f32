import type { WORKER_RECLAIM_MODES } from '../leaf-option-rules';
import { SnowflakeLayout, type SnowflakeLayoutSpec } from './snowflake-layout';
import type { WorkerLeaseStore } from './worker-lease-store.port';

/**
 * When a starting instance takes over the worker ID of an instance that is gone
 * (docs/design.md, "Reclaiming worker IDs"):
 * - `never`: only its own node or a fresh sequence; past the last worker ID it refuses
 *   (`LEAF_WORKER_ID_EXHAUSTED`);
 * - `when-exhausted`: fresh sequences first, a reclaim only once they are used up;
 * - `always`: a reclaimable worker ID before a fresh sequence (Deployments, autoscaling).
 */
export type WorkerReclaimMode = (typeof WORKER_RECLAIM_MODES)[number];

/** Where a worker ID comes from: ZooKeeper, assigned per `ip:port` identity. */
export interface ZookeeperWorkerSource {
  readonly kind: 'zookeeper';
  /** Connect string `host:port[,host:port...][/chroot]`. */
  readonly connect: string;
  readonly sessionTimeoutMs: number;
  readonly connectTimeoutMs: number;
  /** The `ip:port` identity registered in ZooKeeper. */
  readonly advertise: { readonly ip: string; readonly port: number };
  /** See {@link WorkerReclaimMode}. */
  readonly reclaim: WorkerReclaimMode;
  /**
   * A worker ID is reclaimed only once its liveness node is gone and the clock is this far
   * past the horizon its last holder recorded.
   */
  readonly reclaimMarginMs: number;
}

/** Where a worker ID comes from: configured explicitly (embedded mode, no ZooKeeper). */
export interface EmbeddedWorkerSource {
  readonly kind: 'embedded';
  readonly workerId: number;
}

/**
 * Where a worker ID comes from: the ordinal of a StatefulSet pod's host name (`name-3` → 3,
 * plus `offset`), guarded by the state volume's lock and lease like an embedded worker ID,
 * and with ZooKeeper by a liveness node and a lease node there too.
 */
export interface OrdinalWorkerSource {
  readonly kind: 'ordinal';
  /** The host name the ordinal was read from. */
  readonly hostname: string;
  readonly offset: number;
  /** `ordinal + offset`. */
  readonly workerId: number;
  /**
   * With ZooKeeper, the worker ID is also guarded there: the liveness node
   * `/snowflake/{name}/alive/{workerId}` (a copied pod with the same host name refuses to
   * start while the original lives) and the time lease in `/snowflake/{name}/ordinal/{workerId}`
   * (a pod that lost its volume waits past its predecessor's horizon).
   */
  readonly zookeeper?: Pick<
    ZookeeperWorkerSource,
    'connect' | 'sessionTimeoutMs' | 'connectTimeoutMs'
  > | null;
}

/**
 * Where a worker ID comes from: a lease row in the database (`leaf_worker_lease`), claimed
 * at start and renewed by the heartbeat (docs/design.md, "The database variant").
 */
export interface DatabaseWorkerSource {
  readonly kind: 'database';
  /** The lease table's store (the TypeORM adapter for MySQL/MariaDB or PostgreSQL). */
  readonly store: WorkerLeaseStore;
  /** This instance's identity, recorded in the row (`host:port`); a restart prefers its row. */
  readonly holder: string;
  /**
   * The holder stops issuing this long before its row could expire on the database's clock
   * (covers clock-rate drift and the renewal's own delay).
   */
  readonly marginMs: number;
  /** Most time one claim, renewal or release may take before it counts as failed. */
  readonly callTimeoutMs: number;
  /** The ID journal (the module's `journal` on): each claim is journalled under `instance`. */
  readonly journal?: { readonly instance: string } | null;
}

/**
 * Where the worker ID comes from, as the options describe it; the module turns it into a
 * `WorkerIdSource` (`nest/coordination.assembly.ts`). There is no default worker ID.
 */
export type WorkerSourceSettings =
  ZookeeperWorkerSource | EmbeddedWorkerSource | OrdinalWorkerSource | DatabaseWorkerSource;

/** Snowflake settings after defaults and validation: what a worker runs with. */
export interface SnowflakeSettings {
  readonly epoch: number;
  /** The bit split. */
  readonly layout: SnowflakeLayoutSpec;
  /** Encoded in every ID when the layout has data-centre bits. */
  readonly dataCenterId: number;
  readonly stateDir: string;
  readonly sequenceRandomBound: number;
  readonly clockBackwardsToleranceMs: number;
  readonly heartbeatIntervalMs: number;
  readonly leaseMs: number;
  readonly localRunwayMs: number;
  readonly startupMaxWaitMs: number;
}

/** The layout the settings describe (epoch, bit split, data-centre ID). */
export function snowflakeLayoutOf(settings: SnowflakeSettings): SnowflakeLayout {
  return new SnowflakeLayout(settings.epoch, settings.layout, settings.dataCenterId);
}
