import {
  dataSourceAddress,
  dataSourceLabel as databaseName,
} from '../../adapters/typeorm/data-source-label';
import { checkedOption as opt } from '../../core/leaf-defaults';
import type { Problems } from '../../core/option-rule';
import type { SegmentBufferOptions } from '../../core/segment/segment-buffer';
import type { ResolvedHighWaterOptions } from '../leaf-high-water-options';
import type { LeafSegmentOptions, ResolvedSegmentOptions } from '../leaf-options.interface';

/**
 * Segment mode's options with their defaults applied; a problem found is added to `problems`.
 * @returns `null` when segment mode is off.
 */
export function resolveSegment(
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
  if (o.dataSources?.some((ds) => !['mysql', 'mariadb', 'postgres'].includes(ds?.options?.type))) {
    problems.push(
      'segment.dataSources: every database must be MySQL/MariaDB or PostgreSQL (SQLite serves one process: use `dataSource`)',
    );
  }
  const databaseTimeoutMs = opt(problems, 'segment.databaseTimeoutMs', o.databaseTimeoutMs);
  const maxStep = opt(problems, 'segment.maxStep', o.maxStep);
  const highWater = resolveHighWater(problems, o);
  const sources =
    o.dataSources?.map((dataSource) => ({ name: databaseName(dataSource), dataSource })) ??
    o.stores?.map((store, i) => ({ name: `store-${i}`, store }));
  return {
    // With problems, the caller throws before anything reads this.
    allocation: sources
      ? { kind: 'several', sources, timeoutMs: databaseTimeoutMs }
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
    highWater,
  };
}

/** `segment.highWater` resolved: ZooKeeper (`connect`) or a database (`dataSource`), or `null`. */
function resolveHighWater(
  problems: Problems,
  o: LeafSegmentOptions,
): ResolvedHighWaterOptions | null {
  const hw = o.highWater;
  if (!hw) return null;
  if (o.store || o.stores) {
    problems.push(
      'segment.highWater needs segment.dataSource or segment.dataSources (MySQL/MariaDB or PostgreSQL): a custom store fences its own allocations',
    );
  }
  const callTimeoutMs = opt(problems, 'segment.highWater.callTimeoutMs', hw.callTimeoutMs);
  if (hw.dataSource !== undefined) {
    if (hw.connect !== undefined) {
      problems.push(
        'segment.highWater: `connect` (ZooKeeper) and `dataSource` (a database) are exclusive: the mark lives in one place',
      );
    }
    if (!['mysql', 'mariadb', 'postgres'].includes(hw.dataSource?.options?.type)) {
      problems.push(
        "segment.highWater.dataSource: the marks' database must be MySQL/MariaDB or PostgreSQL",
      );
    }
    // The same DataSource, or one on the same host, port and database.
    const address = dataSourceAddress(hw.dataSource);
    const allocation = [o.dataSource, ...(o.dataSources ?? [])].filter((ds) => ds !== undefined);
    if (
      allocation.some(
        (ds) => ds === hw.dataSource || (address !== null && dataSourceAddress(ds) === address),
      )
    ) {
      problems.push(
        'segment.highWater.dataSource is an allocation database: the marks must live outside it (a restore of it would take them along)',
      );
    }
    return { kind: 'database', dataSource: hw.dataSource, callTimeoutMs };
  }
  const connect = opt(problems, 'segment.highWater.connect', hw.connect, { fallback: '' }).trim();
  if (connect === '') {
    problems.push(
      'segment.highWater: a ZooKeeper `connect` string or a `dataSource` (a database of its own) is required',
    );
  }
  return {
    kind: 'zookeeper',
    connect,
    sessionTimeoutMs: opt(problems, 'segment.highWater.sessionTimeoutMs', hw.sessionTimeoutMs),
    callTimeoutMs,
  };
}

/**
 * How a segment buffer loads its ranges, the same in segment mode and for a sequence issuer:
 * a failed background load is retried after at most a second (sooner with a shorter wait).
 */
export function segmentBufferOptions(
  options: Omit<SegmentBufferOptions, 'observer' | 'retryBackoffMs'>,
): Omit<SegmentBufferOptions, 'observer'> {
  const { preloadThreshold, loadTimeoutMs, stepDurationMs, maxStep } = options;
  const retryBackoffMs = Math.min(1000, loadTimeoutMs || 1000);
  return { preloadThreshold, loadTimeoutMs, retryBackoffMs, stepDurationMs, maxStep };
}
