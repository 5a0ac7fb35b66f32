import { TypeormHighWaterStore } from '../adapters/typeorm/typeorm-high-water.store';
import { TypeormRegionRegistry } from '../adapters/typeorm/typeorm-region.registry';
import { TypeormSequenceIssuerStore } from '../adapters/typeorm/typeorm-sequence-issuer.store';
import { ZookeeperHighWaterStore } from '../adapters/zookeeper/zookeeper-high-water.store';
import { ZookeeperIssuerElection } from '../adapters/zookeeper/zookeeper-issuer.election';
import { LeafConfigurationError } from '../core/errors/leaf-configuration.error';
import { checkedOption as opt } from '../core/leaf-defaults';
import type { Problems } from '../core/option-rule';
import type { HighWaterStore } from '../core/segment/high-water';
import type { IssuerElection } from '../core/sequence/issuer-election.port';
import { RowIssuerElection } from '../core/sequence/row-issuer.election';
import { LeaseTableWorkerIdSource } from '../core/snowflake/lease-table-worker-id.source';
import { LocalWorkerIdSource } from '../core/snowflake/local-worker-id.source';
import type { RegionRegistry } from '../core/snowflake/region-registry.port';
import type { WorkerIdSource } from '../core/snowflake/worker-id-source.port';
import { ZookeeperWorkerIdSource } from '../core/snowflake/zookeeper-worker-id.source';
import { modeOptions } from './leaf-modes';
import type { DataSource } from 'typeorm';
import type { OneAllocation, ResolvedLeafOptions } from './leaf-options.interface';
import type { LeafSequenceOptions, ResolvedSequenceOptions } from './sequence-options.interface';
import type { ZkClientFactory, ZkClientFactoryOptions } from './snowflake/zk-client.factory';
/**
 * Where the module turns its coordination options (`segment.highWater`,
 * `sequence.coordination`, `snowflake.zookeeper` / `snowflake.database` / `snowflake.region`) into adapters of the
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
 * connected yet), or the `leaf_sequence_issuer` rows in sequence mode's `dataSource`.
 * @throws {LeafConfigurationError} for the database without a `dataSource` (the resolver
 *   reports it first).
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
  const dataSource = electionDataSource(sequence.allocation);
  if (typeof dataSource === 'string') throw new LeafConfigurationError([dataSource]);
  return new RowIssuerElection(new TypeormSequenceIssuerStore(dataSource));
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

/**
 * The region registry `snowflake.region` names (`leaf_region_lease` in its `dataSource`, or
 * the application's `store`); `null` without a region (the data-centre ID assigned by hand).
 */
export function regionRegistry(options: ResolvedLeafOptions): RegionRegistry | null {
  const region = options.snowflake?.region;
  if (!region) return null;
  return region.registry.kind === 'store'
    ? region.registry.store
    : new TypeormRegionRegistry(region.registry.dataSource);
}

/**
 * `sequence.coordination` and the block it reads (`sequence.zookeeper` or `sequence.database`):
 * the election's connect string and lease, and the option that set the lease; a problem found
 * is added to `problems`. Safe by default: with no ZooKeeper given, the election is held in
 * sequence mode's database.
 */
export function resolveSequenceCoordination(
  problems: Problems,
  raw: LeafSequenceOptions,
  /** Sequence mode's one database; `null` when it has none that suits (reported already). */
  allocation: OneAllocation | null,
): Pick<ResolvedSequenceOptions, 'coordination' | 'connect' | 'sessionTimeoutMs'> & {
  readonly leaseOption: string;
} {
  const coordination = opt(
    problems,
    'sequence.coordination',
    raw.coordination ?? (raw.zookeeper === undefined ? 'database' : undefined),
  );
  const connect = opt(problems, 'sequence.zookeeper.connect', raw.zookeeper?.connect, {
    fallback: '',
  }).trim();
  if (coordination === 'zookeeper') {
    if (connect === '')
      problems.push('sequence.zookeeper.connect: a ZooKeeper connect string is required');
    if (raw.database !== undefined)
      problems.push(
        "sequence.database: set sequence.coordination 'database' to elect the issuers in the database",
      );
    const leaseOption = 'sequence.zookeeper.sessionTimeoutMs';
    const sessionTimeoutMs = opt(problems, leaseOption, raw.zookeeper?.sessionTimeoutMs);
    return { coordination, connect, sessionTimeoutMs, leaseOption };
  }
  if (raw.zookeeper !== undefined) {
    problems.push(
      "sequence.zookeeper: the election is in the database (sequence.coordination 'database'); leave zookeeper out",
    );
  }
  const dataSource = allocation && electionDataSource(allocation);
  if (typeof dataSource === 'string') problems.push(dataSource);
  const leaseOption = 'sequence.database.leaseMs';
  const sessionTimeoutMs = opt(problems, leaseOption, raw.database?.leaseMs);
  return { coordination, connect: '', sessionTimeoutMs, leaseOption };
}

/**
 * The database-held election needs a MySQL/MariaDB or PostgreSQL `dataSource` of the library's:
 * the issuer rows live there, and its stores check the fence in the allocation's transaction
 * (a `store` of the application's, or SQLite, cannot be trusted to).
 * @returns that `DataSource`, or the problem.
 */
function electionDataSource(allocation: OneAllocation): DataSource | string {
  if (allocation.kind !== 'dataSource') {
    return "sequence.coordination 'database' needs a `dataSource` (sequence mode's or segment mode's; MySQL/MariaDB or PostgreSQL), not a `store`";
  }
  const type: string = allocation.dataSource.options.type;
  if (!['mysql', 'mariadb', 'postgres'].includes(type)) {
    return `sequence.coordination 'database' needs MySQL/MariaDB or PostgreSQL (the dataSource is ${type}): elect the issuers through ZooKeeper`;
  }
  return allocation.dataSource;
}
