import { TypeormHighWaterStore } from '../adapters/typeorm/typeorm-high-water.store';
import { TypeormIssuerElection } from '../adapters/typeorm/typeorm-issuer.election';
import { ZookeeperHighWaterStore } from '../adapters/zookeeper/zookeeper-high-water.store';
import { ZookeeperIssuerElection } from '../adapters/zookeeper/zookeeper-issuer.election';
import { ZookeeperWorkerIdSource } from '../core/snowflake/zookeeper-worker-id.source';
import { LeafConfigurationError } from '../core/errors/leaf-configuration.error';
import type { HighWaterStore } from '../core/segment/high-water';
import type { IssuerElection } from '../core/sequence/issuer-election.port';
import { LeaseTableWorkerIdSource } from '../core/snowflake/lease-table-worker-id.source';
import { LocalWorkerIdSource } from '../core/snowflake/local-worker-id.source';
import type { WorkerIdSource } from '../core/snowflake/worker-id-source.port';
import { modeOptions } from './leaf-modes';
import type { ResolvedLeafOptions } from './leaf-options.interface';
import type { ZkClientFactory, ZkClientFactoryOptions } from './snowflake/zk-client.factory';

/**
 * Where the module turns its coordination options (`segment.highWater`,
 * `sequence.coordination`, `snowflake.zookeeper` / `snowflake.database`) into adapters of the
 * core's ports (docs/design.md, "Coordination ports"). The only place that asks which backend
 * an option names: everything else talks to the port.
 */

/**
 * The high-water marks' adapter `segment.highWater` names (ZooKeeper on a client of its own,
 * or `leaf_high_water` in a database of its own); `null` without one.
 * @throws {LeafConfigurationError} for a database driver the marks do not support.
 */
export function highWaterStore(
  options: ResolvedLeafOptions,
  zkFactory: ZkClientFactory,
): HighWaterStore | null {
  const highWater = options.segment?.highWater;
  if (!highWater) return null;
  const settings = { callTimeoutMs: highWater.callTimeoutMs };
  if (highWater.kind === 'database')
    return new TypeormHighWaterStore(highWater.dataSource, options.name, settings);
  const zk = zkFactory({
    connect: highWater.connect,
    sessionTimeoutMs: highWater.sessionTimeoutMs,
  });
  return new ZookeeperHighWaterStore(zk, options.name, settings);
}

/**
 * The issuer election `sequence.coordination` names: ZooKeeper (a client of its own, not
 * connected yet), or the `leaf_sequence_issuer` rows in segment mode's `dataSource`.
 * @throws {LeafConfigurationError} for the database without segment mode's `dataSource` (the
 *   resolver reports it first).
 */
export function issuerElection(
  options: ResolvedLeafOptions,
  zkFactory: ZkClientFactory,
): IssuerElection {
  const sequence = modeOptions(options, 'sequence');
  if (sequence.coordination === 'zookeeper') {
    const { connect, sessionTimeoutMs } = sequence;
    return new ZookeeperIssuerElection(zkFactory({ connect, sessionTimeoutMs }));
  }
  const allocation = options.segment?.allocation;
  if (allocation?.kind !== 'dataSource') {
    throw new LeafConfigurationError([
      "sequence.coordination 'database' needs segment mode's `dataSource`",
    ]);
  }
  return new TypeormIssuerElection(allocation.dataSource);
}

/**
 * The worker-ID source snowflake mode's options name: ZooKeeper (a client of its own, not
 * connected yet; a StatefulSet ordinal guarded there too), the `leaf_worker_lease` rows, or
 * an ID the instance knows by itself (explicit, an ordinal without ZooKeeper).
 */
export function workerIdSource(
  options: ResolvedLeafOptions,
  zkFactory: ZkClientFactory,
): WorkerIdSource {
  const source = modeOptions(options, 'snowflake').workerSource;
  const client = ({ connect, sessionTimeoutMs }: ZkClientFactoryOptions) =>
    zkFactory({ connect, sessionTimeoutMs });
  switch (source.kind) {
    case 'zookeeper':
      return new ZookeeperWorkerIdSource(client(source), source);
    case 'database':
      // Worker IDs leased from the database are journalled at claim, as ranges are.
      return new LeaseTableWorkerIdSource({ ...source, journal: options.journal });
    case 'ordinal':
      return source.zookeeper
        ? ZookeeperWorkerIdSource.forOrdinal(client(source.zookeeper), source.zookeeper, source)
        : new LocalWorkerIdSource(source.workerId, source.hostname);
    default:
      return new LocalWorkerIdSource(source.workerId);
  }
}
