import type { DataSource } from 'typeorm';
import { checkedOption as opt } from '../../core/leaf-defaults';
import type { Problems } from '../../core/option-checks';
import type { SegmentBufferOptions } from '../../core/segment/segment-buffer';
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

/**
 * How a segment buffer loads its ranges, the same in segment mode and for a sequence issuer:
 * a failed background load is retried after at most a second (sooner with a shorter wait).
 */
export function segmentBufferOptions(
  options: ResolvedSegmentOptions,
): Omit<SegmentBufferOptions, 'observer'> {
  return {
    preloadThreshold: options.preloadThreshold,
    loadTimeoutMs: options.loadTimeoutMs,
    retryBackoffMs: Math.min(1000, options.loadTimeoutMs || 1000),
    stepDurationMs: options.stepDurationMs,
    maxStep: options.maxStep,
  };
}
