import { LeafError, LeafErrorCode } from './leaf.error';

/**
 * The ZooKeeper sequence number of this instance's node is beyond the worker ID field (1023
 * in Leaf's layout) and no worker ID could be reclaimed. Leaf-Java would wrap it modulo 1024
 * and collide; we refuse to start.
 */
export class WorkerIdExhaustedError extends LeafError {
  readonly code = LeafErrorCode.WORKER_ID_EXHAUSTED;

  constructor(
    /** The node sequence that does not fit. */
    readonly sequence: number,
    /** Path of the node. */
    readonly nodePath: string,
    /** The `ip:port` identity of this instance. */
    readonly identity: string,
    /** The layout's largest worker ID. */
    readonly maxWorkerId = 1023,
    /** The reclaim mode in force (`never`: reclaim was off). */
    reclaim: 'never' | 'when-exhausted' | 'always' = 'never',
  ) {
    super(
      `Snowflake worker IDs are exhausted: ZooKeeper node ${nodePath} for ${identity} has sequence ${sequence}, but worker IDs stop at ${maxWorkerId} ` +
        '(every new ip:port consumes one and sequence numbers are never reused)' +
        (reclaim === 'never'
          ? '. Fix: set snowflake.zookeeper.reclaim (LEAF_SNOWFLAKE_RECLAIM) to when-exhausted, so worker IDs of instances that are gone are taken over safely; ' +
            'or start this instance with the advertise address (LEAF_SNOWFLAKE_ADVERTISE) of a retired instance that will never run again. '
          : `, and none of them became reclaimable within the start-up wait (reclaim: ${reclaim}): every worker ID is held by a live session or its holder's horizon is still ahead. ` +
            'Fix: stop instances you no longer need, or wait for the horizons shown by `leaf workers` and start again; a layout with more worker bits gives more IDs. ') +
        'Do not delete and re-create the namespace: that hands out worker IDs that were already used.',
    );
  }
}
