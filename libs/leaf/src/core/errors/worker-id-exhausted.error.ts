import { LeafError, LeafErrorCode } from './leaf.error';

/**
 * The ZooKeeper sequence number of this instance's node is 1024 or more, beyond the 10-bit
 * worker ID field. Leaf-Java would wrap it modulo 1024 and collide; we refuse to start.
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
  ) {
    super(
      `Snowflake worker IDs are exhausted: ZooKeeper node ${nodePath} for ${identity} has sequence ${sequence}, but worker IDs stop at 1023 ` +
        '(every new ip:port consumes one and sequence numbers are never reused). ' +
        'Fix: start this instance with the advertise address (LEAF_SNOWFLAKE_ADVERTISE) of a retired instance whose node has a sequence below 1024 and that will never run again; ' +
        'its node and time lease are then reused safely. Do not delete and re-create the namespace: that hands out worker IDs that were already used.',
    );
  }
}
