import { hostname as osHostname } from 'node:os';
import { checkedOption as opt } from '../../core/leaf-defaults';
import { LEAF_OPTION_RULES } from '../../core/leaf-option-rules';
import type { Problems } from '../../core/option-rule';
import {
  DEFAULT_SNOWFLAKE_EPOCH,
  JS_SAFE_EPOCH,
  LEAF_LAYOUT,
  layoutProblems,
  SNOWFLAKE_LAYOUTS,
  type SnowflakeLayoutSpec,
} from '../../core/snowflake/snowflake-layout';
import type { DataSource } from 'typeorm';
import { LeafConfigurationError } from '../../core/errors/leaf-configuration.error';
import { createWorkerLeaseStore } from '../../adapters/typeorm/typeorm-worker-lease.store';
import type { WorkerLeaseStore } from '../../core/snowflake/worker-lease-store.port';
import type {
  LeafSnowflakeOptions,
  LeafZookeeperOptions,
  ResolvedRegionOptions,
  ResolvedSnowflakeOptions,
} from '../leaf-options.interface';
import type { LeafSnowflakeDatabaseOptions } from '../leaf-snowflake-database.options';

const LEASE_DRIVERS = new Set(['mysql', 'mariadb', 'postgres']);

/** True for a DataSource worker IDs can be leased from (MySQL/MariaDB, PostgreSQL). */
function leasesFrom(dataSource: DataSource | null | undefined): dataSource is DataSource {
  const type = (dataSource as { options?: { type?: string } } | null | undefined)?.options?.type;
  return type !== undefined && LEASE_DRIVERS.has(type);
}

function resolveDatabaseSource(
  problems: Problems,
  o: LeafSnowflakeOptions,
  segmentDataSource: DataSource | null,
): ResolvedSnowflakeOptions['workerSource'] | null {
  const d: LeafSnowflakeDatabaseOptions = typeof o.database === 'object' ? o.database : {};
  if (d.dataSource && d.store) {
    problems.push('snowflake.database: give dataSource or store, not both');
    return null;
  }
  let store: WorkerLeaseStore | null = d.store ?? null;
  const dataSource = d.dataSource ?? segmentDataSource;
  if (!store) {
    if (!dataSource) {
      problems.push(
        'snowflake.database needs a DataSource (snowflake.database.dataSource, or segment.dataSource) or a store',
      );
      return null;
    }
    try {
      store = createWorkerLeaseStore(dataSource);
    } catch (error) {
      if (!(error instanceof LeafConfigurationError)) throw error;
      problems.push(...error.problems);
      return null;
    }
  }
  return {
    kind: 'database',
    store,
    holder: o.advertise?.trim() || osHostname(),
    marginMs: opt(problems, 'snowflake.database.marginMs', d.marginMs),
    callTimeoutMs: opt(problems, 'snowflake.database.callTimeoutMs', d.callTimeoutMs),
  };
}

function parseAdvertise(
  problems: Problems,
  advertise: string,
): { ip: string; port: number } | undefined {
  const at = advertise.lastIndexOf(':');
  const ip = advertise.slice(0, Math.max(0, at));
  const port = Number(advertise.slice(at + 1));
  if (
    at <= 0 ||
    !/^[A-Za-z0-9.\-[\]:]+$/.test(ip) ||
    !Number.isInteger(port) ||
    port < 1 ||
    port > 65535
  ) {
    problems.push(`snowflake.advertise must be "ip:port" (got "${advertise}")`);
    return undefined;
  }
  return { ip, port };
}

function zkConnection(problems: Problems, zk: LeafZookeeperOptions) {
  return {
    connect: opt(problems, 'snowflake.zookeeper.connect', zk.connect, { fallback: '' }).trim(),
    sessionTimeoutMs: opt(problems, 'snowflake.zookeeper.sessionTimeoutMs', zk.sessionTimeoutMs),
    connectTimeoutMs: opt(problems, 'snowflake.zookeeper.connectTimeoutMs', zk.connectTimeoutMs),
  };
}

function resolveLayout(
  problems: Problems,
  o: LeafSnowflakeOptions,
): { layout: SnowflakeLayoutSpec; defaultEpoch: number } {
  const raw = o.layout ?? LEAF_OPTION_RULES['snowflake.layout'].default;
  if (typeof raw === 'string') {
    if (!Object.prototype.hasOwnProperty.call(SNOWFLAKE_LAYOUTS, raw)) {
      problems.push(
        `snowflake.layout must be ${Object.keys(SNOWFLAKE_LAYOUTS).join(' or ')} or a bit split (got "${raw}")`,
      );
      return { layout: LEAF_LAYOUT, defaultEpoch: DEFAULT_SNOWFLAKE_EPOCH };
    }
    return {
      layout: SNOWFLAKE_LAYOUTS[raw],
      defaultEpoch: raw === 'js-safe' ? JS_SAFE_EPOCH : DEFAULT_SNOWFLAKE_EPOCH,
    };
  }
  const layout: SnowflakeLayoutSpec = {
    timestampBits: raw.timestampBits,
    dataCenterBits: raw.dataCenterBits ?? 0,
    workerBits: raw.workerBits,
    sequenceBits: raw.sequenceBits,
  };
  const found = layoutProblems(
    layout,
    o.dataCenterId ?? LEAF_OPTION_RULES['snowflake.dataCenterId'].default,
  );
  problems.push(...found.map((problem) => `snowflake.${problem}`));
  return {
    layout: found.length > 0 ? LEAF_LAYOUT : layout,
    defaultEpoch: DEFAULT_SNOWFLAKE_EPOCH,
  };
}

/**
 * `snowflake.region` (docs/operations.md, "Regions"): the region's name, its data-centre ID
 * within the layout (and equal to `snowflake.dataCenterId` if that is given too), the
 * registry, and a lease long enough for the renewals and the margin.
 */
function resolveRegion(
  problems: Problems,
  o: LeafSnowflakeOptions,
  maxDataCenterId: number,
): ResolvedRegionOptions | null {
  const r = o.region;
  if (r === undefined) return null;
  const name = opt(problems, 'snowflake.region.name', r.name, { fallback: '' });
  if (r.name === undefined)
    problems.push('snowflake.region.name is required with snowflake.region');
  const dataCenterId = opt(problems, 'snowflake.region.dataCenterId', r.dataCenterId, {
    fallback: 0,
    max: maxDataCenterId,
  });
  if (r.dataCenterId === undefined)
    problems.push('snowflake.region.dataCenterId is required with snowflake.region');
  if (o.dataCenterId !== undefined && o.dataCenterId !== r.dataCenterId)
    problems.push(
      `snowflake.dataCenterId (${o.dataCenterId}) differs from snowflake.region.dataCenterId (${String(r.dataCenterId)}): the region's lease sets it; leave dataCenterId out`,
    );
  const leaseMs = opt(problems, 'snowflake.region.leaseMs', r.leaseMs);
  const marginMs = opt(problems, 'snowflake.region.marginMs', r.marginMs);
  const renewIntervalMs = opt(problems, 'snowflake.region.renewIntervalMs', r.renewIntervalMs);
  if (renewIntervalMs >= leaseMs - marginMs)
    problems.push(
      `snowflake.region.renewIntervalMs (${renewIntervalMs}) must be less than snowflake.region.leaseMs − marginMs (${leaseMs - marginMs}), or the lease runs out between renewals`,
    );
  const callTimeoutMs = opt(problems, 'snowflake.region.callTimeoutMs', r.callTimeoutMs);
  const settings = {
    region: name,
    dataCenterId,
    leaseMs,
    renewIntervalMs,
    marginMs,
    callTimeoutMs,
  };
  if (r.dataSource && r.store) {
    problems.push('snowflake.region: give dataSource or store, not both');
  } else if (r.store) {
    return { ...settings, registry: { kind: 'store', store: r.store } };
  } else if (!leasesFrom(r.dataSource)) {
    problems.push(
      'snowflake.region needs a MySQL/MariaDB or PostgreSQL dataSource holding leaf_region_lease (LEAF_REGION_MIGRATIONS), or a store',
    );
  } else {
    return { ...settings, registry: { kind: 'dataSource', dataSource: r.dataSource } };
  }
  return null;
}

/** The ordinal at the end of the first label of a StatefulSet pod's host name (`leaf-3` → 3). */
export function hostnameOrdinal(hostname: string): number | null {
  const match = /-([0-9]{1,9})$/.exec(hostname.split('.')[0] ?? '');
  return match ? Number(match[1]) : null;
}

/**
 * Whether the worker IDs are leased from the database: asked for, or by default with a
 * MySQL/MariaDB or PostgreSQL segment database and nothing else set (safe by default;
 * docs/design.md, "The database variant").
 */
function leasesWorkerIds(o: LeafSnowflakeOptions, segmentDataSource: DataSource | null): boolean {
  if (o.database !== undefined) return Boolean(o.database);
  return !o.zookeeper && !o.ordinal && o.workerId === undefined && leasesFrom(segmentDataSource);
}

function resolveWorkerSource(
  problems: Problems,
  o: LeafSnowflakeOptions,
  maxWorkerId: number,
  segmentDataSource: DataSource | null,
): ResolvedSnowflakeOptions['workerSource'] | null {
  // An ordinal may come with ZooKeeper: it then guards the ordinal there too.
  const sources = [
    o.zookeeper && !o.ordinal && 'zookeeper',
    o.workerId !== undefined && 'workerId',
    o.ordinal && 'ordinal',
    o.database && 'database',
  ].filter(Boolean);
  if (sources.length > 1) {
    problems.push(
      `snowflake.${sources.join(', snowflake.')} are exclusive: the worker ID comes from one source`,
    );
    return null;
  }
  if (leasesWorkerIds(o, segmentDataSource))
    return resolveDatabaseSource(problems, o, segmentDataSource);
  if (o.ordinal) {
    const ordinal = o.ordinal === true ? {} : o.ordinal;
    const hostname = ordinal.hostname ?? osHostname();
    const offset = opt(problems, 'snowflake.ordinal.offset', ordinal.offset, { max: maxWorkerId });
    const index = hostnameOrdinal(hostname);
    if (index === null) {
      problems.push(
        `snowflake.ordinal: the host name "${hostname}" does not end in "-<ordinal>" (a StatefulSet pod is named <set>-<n>)`,
      );
      return null;
    }
    if (index + offset > maxWorkerId) {
      problems.push(
        `snowflake.ordinal: ordinal ${index} + offset ${offset} is beyond the largest worker ID ${maxWorkerId}`,
      );
      return null;
    }
    if (o.advertise !== undefined)
      problems.push(
        'snowflake.advertise is not used with snowflake.ordinal (the host name is the identity)',
      );
    return {
      kind: 'ordinal',
      hostname,
      offset,
      workerId: index + offset,
      zookeeper: o.zookeeper ? zkConnection(problems, o.zookeeper) : null,
    };
  }
  if (o.zookeeper) {
    const zk = o.zookeeper;
    if (!o.advertise)
      problems.push('snowflake.advertise ("ip:port") is required with snowflake.zookeeper');
    const advertise = o.advertise ? parseAdvertise(problems, o.advertise) : undefined;
    const source = {
      kind: 'zookeeper' as const,
      reclaim: opt(problems, 'snowflake.zookeeper.reclaim', zk.reclaim),
      reclaimMarginMs: opt(problems, 'snowflake.zookeeper.reclaimMarginMs', zk.reclaimMarginMs),
      ...zkConnection(problems, zk),
    };
    return advertise ? { ...source, advertise } : null;
  }
  if (o.workerId === undefined) {
    problems.push(
      'snowflake mode needs a worker-ID source: snowflake.zookeeper (with advertise), snowflake.database (a MySQL/MariaDB or PostgreSQL DataSource), or an explicit snowflake.workerId ' +
        'unique to this instance; or snowflake: false. Nothing defaults to worker 0, which two instances would share.',
    );
    return null;
  }
  return {
    kind: 'embedded',
    workerId: opt(problems, 'snowflake.workerId', o.workerId, { fallback: 0, max: maxWorkerId }),
  };
}

/**
 * Snowflake mode's options with their defaults applied: the layout and epoch, the worker-ID
 * source (ZooKeeper, an explicit ID or a StatefulSet ordinal; never worker 0 by default) and
 * the lease; a problem found is added to `problems`.
 * @returns `null` when snowflake mode is off (or, with problems, when no source resolved).
 */
export function resolveSnowflake(
  problems: Problems,
  raw: LeafSnowflakeOptions | false | undefined,
  now: number,
  /** Segment mode's DataSource: worker IDs are leased from it by default (MySQL/MariaDB, PostgreSQL). */
  segmentDataSource: DataSource | null = null,
): ResolvedSnowflakeOptions | null {
  if (raw === undefined || raw === false || raw.enabled === false) return null;
  const o = raw;
  const { layout, defaultEpoch } = resolveLayout(problems, o);
  const epoch = opt(problems, 'snowflake.epoch', o.epoch, { fallback: defaultEpoch });
  const maxDataCenterId = 2 ** layout.dataCenterBits - 1;
  const region = resolveRegion(problems, o, maxDataCenterId);
  const dataCenterId =
    region?.dataCenterId ??
    opt(problems, 'snowflake.dataCenterId', o.dataCenterId, { max: maxDataCenterId });
  const lastMs = epoch + 2 ** layout.timestampBits - 1;
  if (epoch > now) problems.push(`snowflake.epoch ${epoch} is in the future`);
  else if (lastMs < now)
    problems.push(
      `snowflake: the layout's ${layout.timestampBits}-bit timestamp field from epoch ${epoch} ran out at ${new Date(lastMs).toISOString()}; choose a later epoch or more timestamp bits`,
    );
  const workerSource = resolveWorkerSource(
    problems,
    o,
    2 ** layout.workerBits - 1,
    segmentDataSource,
  );
  if (o.advertise !== undefined && !o.zookeeper && !leasesWorkerIds(o, segmentDataSource))
    problems.push(
      'snowflake.advertise is used only with snowflake.zookeeper or snowflake.database',
    );
  const heartbeatIntervalMs = opt(problems, 'snowflake.heartbeatIntervalMs', o.heartbeatIntervalMs);
  const leaseMs = opt(problems, 'snowflake.leaseMs', o.leaseMs);
  if (leaseMs <= heartbeatIntervalMs) {
    problems.push(
      `snowflake.leaseMs (${leaseMs}) must exceed snowflake.heartbeatIntervalMs (${heartbeatIntervalMs}), or the lease runs out between heartbeats`,
    );
  }
  if (
    workerSource &&
    'marginMs' in workerSource &&
    leaseMs - heartbeatIntervalMs <= workerSource.marginMs
  ) {
    problems.push(
      `snowflake.database.marginMs (${workerSource.marginMs}) must be less than snowflake.leaseMs − snowflake.heartbeatIntervalMs (${leaseMs - heartbeatIntervalMs}), or the lease runs out between renewals`,
    );
  }
  const settings = {
    epoch,
    layout,
    dataCenterId,
    stateDir: opt(problems, 'snowflake.stateDir', o.stateDir),
    sequenceRandomBound: opt(problems, 'snowflake.sequenceRandomBound', o.sequenceRandomBound),
    clockBackwardsToleranceMs: opt(
      problems,
      'snowflake.clockBackwardsToleranceMs',
      o.clockBackwardsToleranceMs,
    ),
    heartbeatIntervalMs,
    leaseMs,
    localRunwayMs: opt(problems, 'snowflake.localRunwayMs', o.localRunwayMs),
    startupMaxWaitMs: opt(problems, 'snowflake.startupMaxWaitMs', o.startupMaxWaitMs),
  };
  // With problems, the caller throws before anything uses the result.
  return workerSource ? { ...settings, workerSource, region } : null;
}
