import { hostname as osHostname } from 'node:os';
import {
  DEFAULT_SNOWFLAKE_EPOCH,
  JS_SAFE_EPOCH,
  LEAF_LAYOUT,
  layoutProblems,
  SNOWFLAKE_LAYOUTS,
  type SnowflakeLayoutName,
  type SnowflakeLayoutSpec,
} from '../core/snowflake/snowflake-layout';
import { DEFAULT_RECLAIM_MARGIN_MS } from '../core/snowflake/snowflake-settings';
import { systemClock } from '../core/clock';
import { LeafConfigurationError } from '../core/errors/leaf-configuration.error';
import { checkedInt, type Problems } from '../core/option-checks';
import type {
  LeafModuleOptions,
  LeafSegmentOptions,
  LeafSnowflakeOptions,
  LeafZookeeperOptions,
  ResolvedLeafOptions,
  ResolvedSegmentOptions,
  ResolvedSnowflakeOptions,
} from './leaf-options.interface';

/** Largest worker ID the 10-bit field of Leaf's layout holds. */
export const MAX_WORKER_ID = 1023;
/** Leaf's upper bound of the dynamic step. */
export const DEFAULT_MAX_STEP = 1_000_000;

const int = checkedInt;

function resolveSegment(
  problems: Problems,
  raw: LeafSegmentOptions | false | undefined,
): ResolvedSegmentOptions | null {
  if (raw === false || raw?.enabled === false) return null;
  const o = raw ?? {};
  if (!o.store && !o.dataSource) {
    problems.push('segment: a `dataSource` or a `store` is required when segment mode is enabled');
  }
  if (o.store && o.dataSource) {
    problems.push('segment: `dataSource` and `store` are exclusive: ranges come from one source');
  }
  const threshold = o.preloadThreshold ?? 0.9;
  if (typeof threshold !== 'number' || !(threshold > 0 && threshold <= 1)) {
    problems.push(`segment.preloadThreshold must be a number in (0, 1] (got ${String(threshold)})`);
  }
  if (o.handBackOnClose !== undefined && typeof o.handBackOnClose !== 'boolean') {
    problems.push(`segment.handBackOnClose must be a boolean (got ${String(o.handBackOnClose)})`);
  }
  const maxStep = int(problems, 'segment.maxStep', o.maxStep, DEFAULT_MAX_STEP, 1, 2 ** 31 - 1);
  const warmTags = o.warmTags ?? [];
  if (!Array.isArray(warmTags) || warmTags.some((t) => typeof t !== 'string' || t.length === 0)) {
    problems.push('segment.warmTags must be an array of non-empty strings');
  }
  return {
    // With problems, the caller throws before anything reads this.
    allocation: o.store
      ? { kind: 'store', store: o.store }
      : { kind: 'dataSource', dataSource: o.dataSource! },
    maxStep,
    // At least the largest dynamic step by default: a client's ranges follow the same rule.
    maxRangeCount: int(problems, 'segment.maxRangeCount', o.maxRangeCount, maxStep, 1, 2 ** 31 - 1),
    stepDurationMs: int(problems, 'segment.stepDurationMs', o.stepDurationMs, 15 * 60_000, 1),
    refreshIntervalMs: int(problems, 'segment.refreshIntervalMs', o.refreshIntervalMs, 60_000, 10),
    loadTimeoutMs: int(problems, 'segment.loadTimeoutMs', o.loadTimeoutMs, 3000, 0),
    preloadThreshold: threshold,
    maxConcurrentLoads: int(
      problems,
      'segment.maxConcurrentLoads',
      o.maxConcurrentLoads,
      8,
      1,
      1024,
    ),
    warmTags: Array.isArray(warmTags) ? [...warmTags] : [],
    readinessRunwayMs: int(
      problems,
      'segment.readinessRunwayMs',
      o.readinessRunwayMs,
      30_000,
      0,
      86_400_000,
    ),
    handBackOnClose: o.handBackOnClose !== false,
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

const RECLAIM_MODES = ['never', 'when-exhausted', 'always'] as const;

function zkConnection(problems: Problems, zk: LeafZookeeperOptions) {
  if (typeof zk.connect !== 'string' || zk.connect.trim() === '') {
    problems.push('snowflake.zookeeper.connect must be a non-empty connect string');
  }
  return {
    connect: String(zk.connect ?? '').trim(),
    sessionTimeoutMs: int(
      problems,
      'snowflake.zookeeper.sessionTimeoutMs',
      zk.sessionTimeoutMs,
      10_000,
      1000,
    ),
    connectTimeoutMs: int(
      problems,
      'snowflake.zookeeper.connectTimeoutMs',
      zk.connectTimeoutMs,
      5000,
      100,
    ),
  };
}

function resolveLayout(
  problems: Problems,
  o: LeafSnowflakeOptions,
): { layout: SnowflakeLayoutSpec; defaultEpoch: number } {
  const raw = o.layout ?? 'leaf';
  if (typeof raw === 'string') {
    if (!Object.prototype.hasOwnProperty.call(SNOWFLAKE_LAYOUTS, raw)) {
      problems.push(
        `snowflake.layout must be ${Object.keys(SNOWFLAKE_LAYOUTS).join(' or ')} or a bit split (got "${raw}")`,
      );
      return { layout: LEAF_LAYOUT, defaultEpoch: DEFAULT_SNOWFLAKE_EPOCH };
    }
    const name = raw as SnowflakeLayoutName;
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
  const found = layoutProblems(layout, o.dataCenterId ?? 0);
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
    const offset = int(problems, 'snowflake.ordinal.offset', ordinal.offset, 0, 0, maxWorkerId);
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
    const reclaim = zk.reclaim ?? 'when-exhausted';
    if (!RECLAIM_MODES.includes(reclaim))
      problems.push(
        `snowflake.zookeeper.reclaim must be ${RECLAIM_MODES.join(', ')} (got ${String(reclaim)})`,
      );
    const source = {
      kind: 'zookeeper' as const,
      reclaim,
      reclaimMarginMs: int(
        problems,
        'snowflake.zookeeper.reclaimMarginMs',
        zk.reclaimMarginMs,
        DEFAULT_RECLAIM_MARGIN_MS,
        0,
        600_000,
      ),
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
    workerId: int(problems, 'snowflake.workerId', o.workerId, 0, 0, maxWorkerId),
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
  const epoch = int(problems, 'snowflake.epoch', o.epoch, defaultEpoch, 0);
  const dataCenterId = int(
    problems,
    'snowflake.dataCenterId',
    o.dataCenterId,
    0,
    0,
    2 ** layout.dataCenterBits - 1,
  );
  if (epoch > now) problems.push(`snowflake.epoch ${epoch} is in the future`);
  else if (epoch + 2 ** layout.timestampBits - 1 < now)
    problems.push(
      `snowflake: the layout's ${layout.timestampBits}-bit timestamp field from epoch ${epoch} ran out at ${new Date(epoch + 2 ** layout.timestampBits - 1).toISOString()}; choose a later epoch or more timestamp bits`,
    );
  if (o.advertise !== undefined && !o.zookeeper)
    problems.push('snowflake.advertise is used only with snowflake.zookeeper');
  const workerSource = resolveWorkerSource(problems, o, 2 ** layout.workerBits - 1);
  const heartbeatIntervalMs = int(
    problems,
    'snowflake.heartbeatIntervalMs',
    o.heartbeatIntervalMs,
    3000,
    10,
  );
  const leaseMs = int(problems, 'snowflake.leaseMs', o.leaseMs, 10_000, 1);
  if (leaseMs <= heartbeatIntervalMs) {
    problems.push(
      `snowflake.leaseMs (${leaseMs}) must exceed snowflake.heartbeatIntervalMs (${heartbeatIntervalMs}), or the lease runs out between heartbeats`,
    );
  }
  const stateDir = o.stateDir ?? './data';
  if (typeof stateDir !== 'string' || stateDir === '')
    problems.push('snowflake.stateDir must be a non-empty path');
  const settings = {
    epoch,
    layout,
    dataCenterId,
    stateDir,
    sequenceRandomBound: int(
      problems,
      'snowflake.sequenceRandomBound',
      o.sequenceRandomBound,
      100,
      0,
      4095,
    ),
    clockBackwardsToleranceMs: int(
      problems,
      'snowflake.clockBackwardsToleranceMs',
      o.clockBackwardsToleranceMs,
      5,
      0,
      60_000,
    ),
    heartbeatIntervalMs,
    leaseMs,
    localRunwayMs: int(problems, 'snowflake.localRunwayMs', o.localRunwayMs, 60_000, 0),
    startupMaxWaitMs: int(problems, 'snowflake.startupMaxWaitMs', o.startupMaxWaitMs, 90_000, 0),
  };
  // With problems, the caller throws before anything uses the result.
  return workerSource ? { ...settings, workerSource } : null;
}

/**
 * Applies defaults to raw module options and validates all of them.
 *
 * @throws {LeafConfigurationError} listing every problem found, not just the first.
 */
export function resolveLeafOptions(raw: LeafModuleOptions = {}): ResolvedLeafOptions {
  const problems: Problems = [];
  const clock = raw.clock ?? systemClock;
  const name = raw.name ?? 'leaf';
  if (typeof name !== 'string' || !/^[A-Za-z0-9._-]{1,64}$/.test(name)) {
    problems.push(
      `name must be 1-64 characters of [A-Za-z0-9._-] and no "/" (got "${String(name)}")`,
    );
  }
  const resolved: ResolvedLeafOptions = {
    name,
    clock,
    maxBatchSize: int(problems, 'maxBatchSize', raw.maxBatchSize, 1000, 1, 1_000_000),
    segment: resolveSegment(problems, raw.segment),
    snowflake: resolveSnowflake(problems, raw.snowflake, clock.now()),
  };
  if (problems.length > 0) throw new LeafConfigurationError(problems);
  return resolved;
}

export { DEFAULT_SNOWFLAKE_EPOCH };
