/** Where a worker ID comes from: ZooKeeper, assigned per `ip:port` identity. */
export interface ZookeeperWorkerSource {
  readonly kind: 'zookeeper';
  /** Connect string `host:port[,host:port...][/chroot]`. */
  readonly connect: string;
  readonly sessionTimeoutMs: number;
  readonly connectTimeoutMs: number;
  /** The `ip:port` identity registered in ZooKeeper. */
  readonly advertise: { readonly ip: string; readonly port: number };
}

/** Where a worker ID comes from: configured explicitly (embedded mode, no ZooKeeper). */
export interface EmbeddedWorkerSource {
  readonly kind: 'embedded';
  readonly workerId: number;
}

/**
 * Snowflake settings after defaults and validation: what a worker runs with. There is no
 * default worker ID: a worker ID always comes from an explicit source.
 */
export interface SnowflakeSettings {
  readonly workerSource: ZookeeperWorkerSource | EmbeddedWorkerSource;
  readonly epoch: number;
  readonly stateDir: string;
  readonly sequenceRandomBound: number;
  readonly clockBackwardsToleranceMs: number;
  readonly heartbeatIntervalMs: number;
  readonly leaseMs: number;
  readonly localRunwayMs: number;
  readonly startupMaxWaitMs: number;
}
