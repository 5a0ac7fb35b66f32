import { hostname as osHostname } from 'node:os';
import type { DataSource } from 'typeorm';
import {
  DEFAULT_SNOWFLAKE_EPOCH,
  JS_SAFE_EPOCH,
  LEAF_LAYOUT,
  layoutProblems,
  SNOWFLAKE_LAYOUTS,
  type SnowflakeLayoutName,
  type SnowflakeLayoutSpec,
} from '../core/snowflake/snowflake-layout';
import { systemClock } from '../core/clock';
import { LeafConfigurationError } from '../core/errors/leaf-configuration.error';
import { checkedOption } from '../core/leaf-defaults';
import { LEAF_OPTION_RULES } from '../core/leaf-option-rules';
import type { Problems } from '../core/option-checks';
import type {
  LeafModuleOptions,
  LeafSegmentOptions,
  LeafSequenceOptions,
  LeafSnowflakeOptions,
  LeafZookeeperOptions,
  ResolvedLeafOptions,
  ResolvedSegmentOptions,
  ResolvedSequenceOptions,
  ResolvedSnowflakeOptions,
} from './leaf-options.interface';

const opt = checkedOption;

function resolveSegment(
  problems: Problems,
  raw: LeafSegmentOptions | false | undefined,
): ResolvedSegmentOptions | null {
  if (raw === false || raw?.enabled === false) return null;
  const o = raw ?? {};
  const given = (['dataSource', 'store', 'dataSources', 'stores'] as const).filter(
    (key) => o[key] !== undefined,
  );
  if (given.length === 0) {
    problems.push(
      'segment: a `dataSource`, a `store`, `dataSources` or `stores` is required when segment mode is enabled',
    );
  }
  if (given.length > 1) {
    problems.push(
      `segment: ${given.map((key) => `\`${key}\``).join(' and ')} are exclusive: give one database, one store, or one list`,
    );
  }
  const several = o.dataSources ?? o.stores;
  if (several !== undefined && (!Array.isArray(several) || several.length === 0)) {
    problems.push('segment.dataSources / segment.stores: a non-empty list is required');
  }
  if (o.dataSources?.some((ds) => !['mysql', 'mariadb'].includes(ds?.options?.type))) {
    problems.push(
      'segment.dataSources: every database must be MySQL/MariaDB (SQLite serves one process: use `dataSource`)',
    );
  }
  const databaseTimeoutMs = opt(problems, 'segment.databaseTimeoutMs', o.databaseTimeoutMs);
  const maxStep = opt(problems, 'segment.maxStep', o.maxStep);
  const hw = o.highWater;
  const connect = hw
    ? opt(problems, 'segment.highWater.connect', hw.connect, { fallback: '' }).trim()
    : '';
  if (hw && connect === '')
    problems.push('segment.highWater.connect: a ZooKeeper connect string is required');
  if (hw && (o.store || o.stores)) {
    problems.push(
      'segment.highWater needs segment.dataSource (MySQL/MariaDB): a custom store fences its own allocations',
    );
  }
  return {
    // With problems, the caller throws before anything reads this.
    allocation: o.dataSources
      ? {
          kind: 'several',
          sources: o.dataSources.map((dataSource) => ({
            name: databaseName(dataSource),
            dataSource,
          })),
          timeoutMs: databaseTimeoutMs,
        }
      : o.stores
        ? {
            kind: 'several',
            sources: o.stores.map((store, i) => ({ name: `store-${i}`, store })),
            timeoutMs: databaseTimeoutMs,
          }
        : o.store
          ? { kind: 'store', store: o.store }
          : { kind: 'dataSource', dataSource: o.dataSource! },
    maxStep,
    // At least the largest dynamic step by default: a client's ranges follow the same rule.
    maxRangeCount: opt(problems, 'segment.maxRangeCount', o.maxRangeCount, { fallback: maxStep }),
    stepDurationMs: opt(problems, 'segment.stepDurationMs', o.stepDurationMs),
    refreshIntervalMs: opt(problems, 'segment.refreshIntervalMs', o.refreshIntervalMs),
    loadTimeoutMs: opt(problems, 'segment.loadTimeoutMs', o.loadTimeoutMs),
    preloadThreshold: opt(problems, 'segment.preloadThreshold', o.preloadThreshold),
    maxConcurrentLoads: opt(problems, 'segment.maxConcurrentLoads', o.maxConcurrentLoads),
    warmTags: [...opt(problems, 'segment.warmTags', o.warmTags)],
    readinessRunwayMs: opt(problems, 'segment.readinessRunwayMs', o.readinessRunwayMs),
    handBackOnClose: opt(problems, 'segment.handBackOnClose', o.handBackOnClose),
    databaseTimeoutMs,
    highWater: hw
      ? {
          connect,
          sessionTimeoutMs: opt(
            problems,
            'segment.highWater.sessionTimeoutMs',
            hw.sessionTimeoutMs,
          ),
          callTimeoutMs: opt(problems, 'segment.highWater.callTimeoutMs', hw.callTimeoutMs),
        }
      : null,
  };
}

/** `host:port/database` of a DataSource, as logs and readiness name it (never a password). */
function databaseName(dataSource: DataSource): string {
  const options = dataSource?.options as
    { host?: string; port?: number; database?: string; url?: string } | undefined;
  if (!options) return 'database';
  if (options.url) {
    try {
      const url = new URL(options.url);
      return `${url.hostname}:${url.port || 3306}${url.pathname}`;
    } catch {
      return 'database';
    }
  }
  return `${options.host ?? 'localhost'}:${options.port ?? 3306}/${options.database ?? ''}`;
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
    const name: SnowflakeLayoutName = raw;
    return {
      layout: SNOWFLAKE_LAYOUTS[name],
      defaultEpoch: name === 'js-safe' ? JS_SAFE_EPOCH : DEFAULT_SNOWFLAKE_EPOCH,
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

/** The ordinal at the end of the first label of a StatefulSet pod's host name (`leaf-3` → 3). */
export function hostnameOrdinal(hostname: string): number | null {
  const match = /-([0-9]{1,9})$/.exec(hostname.split('.')[0] ?? '');
  return match ? Number(match[1]) : null;
}

function resolveWorkerSource(
  problems: Problems,
  o: LeafSnowflakeOptions,
  maxWorkerId: number,
): ResolvedSnowflakeOptions['workerSource'] | null {
  // An ordinal may come with ZooKeeper: it then guards the ordinal there too.
  const sources = [
    o.zookeeper && !o.ordinal && 'zookeeper',
    o.workerId !== undefined && 'workerId',
    o.ordinal && 'ordinal',
  ].filter(Boolean);
  if (sources.length > 1) {
    problems.push(
      `snowflake.${sources.join(', snowflake.')} are exclusive: the worker ID comes from one source`,
    );
    return null;
  }
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
    const zk = o.zookeeper;
    if (o.advertise !== undefined)
      problems.push(
        'snowflake.advertise is not used with snowflake.ordinal (the host name is the identity)',
      );
    return {
      kind: 'ordinal',
      hostname,
      offset,
      workerId: index + offset,
      zookeeper: zk ? zkConnection(problems, zk) : null,
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
      'snowflake mode needs a worker-ID source: snowflake.zookeeper (with advertise), or an explicit snowflake.workerId ' +
        'unique to this instance; or snowflake: false. Nothing defaults to worker 0, which two instances would share.',
    );
    return null;
  }
  return {
    kind: 'embedded',
    workerId: opt(problems, 'snowflake.workerId', o.workerId, { fallback: 0, max: maxWorkerId }),
  };
}

function resolveSnowflake(
  problems: Problems,
  raw: LeafSnowflakeOptions | false | undefined,
  now: number,
): ResolvedSnowflakeOptions | null {
  if (raw === undefined || raw === false || raw.enabled === false) return null;
  const o = raw;
  const { layout, defaultEpoch } = resolveLayout(problems, o);
  const epoch = opt(problems, 'snowflake.epoch', o.epoch, { fallback: defaultEpoch });
  const dataCenterId = opt(problems, 'snowflake.dataCenterId', o.dataCenterId, {
    max: 2 ** layout.dataCenterBits - 1,
  });
  if (epoch > now) problems.push(`snowflake.epoch ${epoch} is in the future`);
  else if (epoch + 2 ** layout.timestampBits - 1 < now)
    problems.push(
      `snowflake: the layout's ${layout.timestampBits}-bit timestamp field from epoch ${epoch} ran out at ${new Date(epoch + 2 ** layout.timestampBits - 1).toISOString()}; choose a later epoch or more timestamp bits`,
    );
  if (o.advertise !== undefined && !o.zookeeper)
    problems.push('snowflake.advertise is used only with snowflake.zookeeper');
  const workerSource = resolveWorkerSource(problems, o, 2 ** layout.workerBits - 1);
  const heartbeatIntervalMs = opt(problems, 'snowflake.heartbeatIntervalMs', o.heartbeatIntervalMs);
  const leaseMs = opt(problems, 'snowflake.leaseMs', o.leaseMs);
  if (leaseMs <= heartbeatIntervalMs) {
    problems.push(
      `snowflake.leaseMs (${leaseMs}) must exceed snowflake.heartbeatIntervalMs (${heartbeatIntervalMs}), or the lease runs out between heartbeats`,
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
  return workerSource ? { ...settings, workerSource } : null;
}

/**
 * The rule between sequence mode and segment mode's databases, for the resolver and for
 * configuration front ends (the application checks its environment with it): sequence mode
 * takes its ranges from segment mode, from exactly one database. Each database's ranges lie
 * above its own earlier ones only, so with several a successor's first range could be below
 * IDs already issued (docs/design.md, "Sequence mode").
 * @returns the problem, or null when `segment` (its databases: none, one or several) suits.
 */
export function sequenceDatabaseProblem(segment: 'none' | 'one' | 'several'): string | null {
  if (segment === 'none') {
    return 'sequence mode takes its ranges from segment mode: enable segment with a `dataSource` or a `store`';
  }
  if (segment === 'several') {
    return 'sequence mode needs one database (segment `dataSource` or `store`): with several, a new issuer’s first range is above only its own database’s earlier ranges';
  }
  return null;
}

function resolveSequence(
  problems: Problems,
  raw: LeafSequenceOptions | false | undefined,
  segment: ResolvedSegmentOptions | null,
): ResolvedSequenceOptions | null {
  if (raw === undefined || raw === false || raw.enabled === false) return null;
  const databases = !segment ? 'none' : segment.allocation.kind === 'several' ? 'several' : 'one';
  const databaseProblem = sequenceDatabaseProblem(databases);
  if (databaseProblem !== null) problems.push(databaseProblem);
  const connect = opt(problems, 'sequence.zookeeper.connect', raw.zookeeper?.connect, {
    fallback: '',
  }).trim();
  if (connect === '')
    problems.push('sequence.zookeeper.connect: a ZooKeeper connect string is required');
  const advertise = opt(problems, 'sequence.advertise', raw.advertise, { fallback: '' });
  if (advertise === '' && raw.advertise === undefined)
    problems.push('sequence.advertise ("http://host:port") is required');
  const resolved: ResolvedSequenceOptions = {
    connect,
    sessionTimeoutMs: opt(
      problems,
      'sequence.zookeeper.sessionTimeoutMs',
      raw.zookeeper?.sessionTimeoutMs,
    ),
    advertise,
    groups: opt(problems, 'sequence.groups', raw.groups),
    leaseMarginMs: opt(problems, 'sequence.leaseMarginMs', raw.leaseMarginMs),
    heartbeatIntervalMs: opt(problems, 'sequence.heartbeatIntervalMs', raw.heartbeatIntervalMs),
    waitMs: opt(problems, 'sequence.waitMs', raw.waitMs),
    forwardTimeoutMs: opt(problems, 'sequence.forwardTimeoutMs', raw.forwardTimeoutMs),
    handOverAfterMs: opt(problems, 'sequence.handOverAfterMs', raw.handOverAfterMs),
  };
  const { sessionTimeoutMs, leaseMarginMs, heartbeatIntervalMs } = resolved;
  if (sessionTimeoutMs <= leaseMarginMs + 2 * heartbeatIntervalMs) {
    problems.push(
      `sequence.zookeeper.sessionTimeoutMs (${sessionTimeoutMs}) must exceed sequence.leaseMarginMs (${leaseMarginMs}) + 2 × sequence.heartbeatIntervalMs (${heartbeatIntervalMs}), or the lease runs out between heartbeats`,
    );
  }
  return resolved;
}

/**
 * Applies defaults to raw module options and validates all of them.
 *
 * @throws {LeafConfigurationError} listing every problem found, not just the first.
 */
export function resolveLeafOptions(raw: LeafModuleOptions = {}): ResolvedLeafOptions {
  const problems: Problems = [];
  const clock = raw.clock ?? systemClock;
  const resolved: ResolvedLeafOptions = {
    name: opt(problems, 'name', raw.name),
    clock,
    maxBatchSize: opt(problems, 'maxBatchSize', raw.maxBatchSize),
    segment: resolveSegment(problems, raw.segment),
    snowflake: resolveSnowflake(problems, raw.snowflake, clock.now()),
    sequence: null,
  };
  const sequence = resolveSequence(problems, raw.sequence, resolved.segment);
  if (problems.length > 0) throw new LeafConfigurationError(problems);
  return { ...resolved, sequence };
}

export { DEFAULT_SNOWFLAKE_EPOCH };
