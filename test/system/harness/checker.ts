/**
 * Checks of a {@link History}, Jepsen unique-ids style (docs/reliability.md). Safety
 * ({@link checkUnique}, {@link checkSegment}) is kept apart from availability
 * ({@link availability}): a fault may cost answers, never uniqueness.
 */
import type { History, Operation } from './history';

/** Outcome of {@link checkUnique}. */
export interface UniqueResult {
  /** True when no ID was issued twice and no operation was dropped from the history. */
  readonly valid: boolean;
  /** IDs of successful operations, all processes. */
  readonly ids: number;
  /** Distinct IDs among them (per namespace). */
  readonly distinct: number;
  /**
   * Each ID issued more than once in its namespace, with how often and by which processes
   * (at most 100).
   */
  readonly duplicates: ReadonlyArray<{
    namespace: string;
    id: bigint;
    count: number;
    processes: string[];
  }>;
  /** How many distinct IDs were issued more than once (all of them, not only the listed). */
  readonly duplicateCount: number;
  /** Operations the history could not keep (its bounds): their IDs are unchecked. */
  readonly dropped: number;
}

/**
 * Where an ID must be unique: segment and sequence IDs within their tag (`segment:<tag>`,
 * `sequence:<key>`), snowflake IDs across every key and process (`snowflake`).
 */
export function namespaceOf(operation: Operation): string {
  if (operation.route.startsWith('segment/')) return `segment:${operation.key ?? ''}`;
  if (operation.route.startsWith('sequence/')) return `sequence:${operation.key ?? ''}`;
  return 'snowflake';
}

/** No ID among the `ok` operations of every process occurs twice in its namespace. */
export function checkUnique(history: History): UniqueResult {
  const seen = new Map<string, Set<bigint>>();
  const repeated = new Map<string, Set<bigint>>();
  let ids = 0;
  for (const operation of history.operations) {
    if (operation.type !== 'ok') continue;
    const namespace = namespaceOf(operation);
    let known = seen.get(namespace);
    if (!known) seen.set(namespace, (known = new Set()));
    for (const id of operation.ids) {
      ids++;
      if (!known.has(id)) known.add(id);
      else {
        const twice = repeated.get(namespace) ?? new Set<bigint>();
        twice.add(id);
        repeated.set(namespace, twice);
      }
    }
  }
  type Duplicate = UniqueResult['duplicates'][number];
  const details = new Map<string, Duplicate>();
  for (const [namespace, twice] of repeated) {
    for (const id of twice) {
      if (details.size >= 100) break;
      details.set(`${namespace} ${id}`, { namespace, id, count: 0, processes: [] });
    }
  }
  if (details.size > 0) {
    for (const operation of history.operations) {
      if (operation.type !== 'ok') continue;
      const namespace = namespaceOf(operation);
      for (const id of operation.ids) {
        const entry = details.get(`${namespace} ${id}`);
        if (entry) {
          entry.count++;
          if (!entry.processes.includes(operation.process)) entry.processes.push(operation.process);
        }
      }
    }
  }
  let duplicateCount = 0;
  for (const twice of repeated.values()) duplicateCount += twice.size;
  let distinct = 0;
  for (const known of seen.values()) distinct += known.size;
  return {
    valid: duplicateCount === 0 && history.dropped === 0,
    ids,
    distinct,
    duplicates: [...details.values()],
    duplicateCount,
    dropped: history.dropped,
  };
}

/**
 * A range the database committed to some allocating transaction: `[start, end)` of `tag`
 * (`start` the old and `end` the new `max_id`, the stores' convention), in commit order.
 */
export interface CommittedRange {
  readonly tag: string;
  readonly start: bigint;
  readonly end: bigint;
  /** Commit order (the audit row's sequence). */
  readonly seq: number;
  /** The database session that committed it (`CONNECTION_ID()`), when the audit knows it. */
  readonly connectionId?: number;
}

/** Outcome of {@link checkSegment}. */
export interface SegmentResult {
  /** True when every ID lies in a committed range, ranges never overlap, and each process's IDs of a tag increase. */
  readonly valid: boolean;
  /** IDs of successful segment operations. */
  readonly ids: number;
  readonly ranges: number;
  /** IDs outside every committed range of their tag (count and up to 20 examples). */
  readonly outside: { readonly count: number; readonly sample: bigint[] };
  /** Pairs of committed ranges of one tag that overlap (up to 20). */
  readonly overlaps: ReadonlyArray<{ tag: string; first: CommittedRange; second: CommittedRange }>;
  readonly overlapCount: number;
  /**
   * IDs served from a part of the key space the database committed more than once (only
   * after `max_id` was lowered by hand). Information: each was served from one of the
   * grants; serving it twice is what {@link checkUnique} catches.
   */
  readonly idsInOverlap: number;
  /**
   * Operations of one process and tag that completed before another one began and still
   * carried an ID not below it (count and up to 20 examples). `segment/range` is left out:
   * a range may be allocated past the buffer that later single IDs come from.
   */
  readonly notIncreasing: {
    readonly count: number;
    readonly sample: Array<{ process: string; tag: string; before: bigint; after: bigint }>;
  };
}

interface Interval {
  start: bigint;
  end: bigint;
}

/** Sorted, merged union of `intervals`. */
function union(intervals: Interval[]): Interval[] {
  const sorted = [...intervals].sort((a, b) =>
    a.start < b.start ? -1 : a.start > b.start ? 1 : 0,
  );
  const merged: Interval[] = [];
  for (const { start, end } of sorted) {
    const last = merged[merged.length - 1];
    if (last && start <= last.end) {
      if (end > last.end) last.end = end;
    } else {
      merged.push({ start, end });
    }
  }
  return merged;
}

/** True when `id` lies in one of the sorted, disjoint `intervals`. */
function within(intervals: readonly Interval[], id: bigint): boolean {
  let low = 0;
  let high = intervals.length - 1;
  while (low <= high) {
    const middle = (low + high) >> 1;
    const interval = intervals[middle]!;
    if (id < interval.start) high = middle - 1;
    else if (id >= interval.end) low = middle + 1;
    else return true;
  }
  return false;
}

/**
 * IDs of `operations` that lie outside every range of `ranges` of their tag (e.g. the
 * ranges committed after a restart, for the IDs the restarted instance issued).
 */
export function idsOutside(
  operations: readonly Operation[],
  ranges: readonly CommittedRange[],
): bigint[] {
  const byTag = new Map<string, Interval[]>();
  for (const range of ranges) {
    const list = byTag.get(range.tag) ?? [];
    list.push({ start: range.start, end: range.end });
    byTag.set(range.tag, list);
  }
  const merged = new Map([...byTag].map(([tag, list]) => [tag, union(list)]));
  const outside: bigint[] = [];
  for (const operation of operations) {
    const intervals = merged.get(operation.key ?? '') ?? [];
    for (const id of operation.ids) if (!within(intervals, id)) outside.push(id);
  }
  return outside;
}

const isSegment = (operation: Operation): boolean =>
  operation.type === 'ok' && operation.route.startsWith('segment/');

/**
 * Segment-mode safety: every `ok` segment ID inside a range the database committed for
 * its tag; committed ranges never overlap; per instance and tag, IDs increase in real time.
 */
export function checkSegment(
  history: History,
  committedRanges: readonly CommittedRange[],
): SegmentResult {
  const byTag = new Map<string, CommittedRange[]>();
  for (const range of committedRanges) {
    const list = byTag.get(range.tag) ?? [];
    list.push(range);
    byTag.set(range.tag, list);
  }
  const overlaps: Array<{ tag: string; first: CommittedRange; second: CommittedRange }> = [];
  let overlapCount = 0;
  const covered = new Map<string, Interval[]>();
  const doubled = new Map<string, Interval[]>();
  for (const [tag, ranges] of byTag) {
    const sorted = [...ranges].sort((a, b) => (a.start < b.start ? -1 : a.start > b.start ? 1 : 0));
    const twice: Interval[] = [];
    let reach: CommittedRange | null = null;
    for (const range of sorted) {
      if (reach && range.start < reach.end) {
        overlapCount++;
        if (overlaps.length < 20) overlaps.push({ tag, first: reach, second: range });
        twice.push({ start: range.start, end: range.end < reach.end ? range.end : reach.end });
      }
      if (!reach || range.end > reach.end) reach = range;
    }
    covered.set(tag, union(sorted));
    doubled.set(tag, union(twice));
  }

  let ids = 0;
  let idsInOverlap = 0;
  const outside = { count: 0, sample: [] as bigint[] };
  const operations = history.operations.filter(isSegment);
  for (const operation of operations) {
    const ranges = covered.get(operation.key ?? '') ?? [];
    const twice = doubled.get(operation.key ?? '') ?? [];
    for (const id of operation.ids) {
      ids++;
      if (!within(ranges, id)) {
        outside.count++;
        if (outside.sample.length < 20) outside.sample.push(id);
      }
      if (twice.length > 0 && within(twice, id)) idsInOverlap++;
    }
  }
  const notIncreasing = checkIncreasing(operations.filter((o) => o.route !== 'segment/range'));
  return {
    valid: outside.count === 0 && overlapCount === 0 && notIncreasing.count === 0,
    ids,
    ranges: committedRanges.length,
    outside,
    overlaps,
    overlapCount,
    idsInOverlap,
    notIncreasing,
  };
}

/** Per process and key: an operation that began after another completed carries only larger IDs. */
function checkIncreasing(operations: readonly Operation[]): SegmentResult['notIncreasing'] {
  const groups = new Map<string, Operation[]>();
  for (const operation of operations) {
    if (operation.ids.length === 0) continue;
    const group = `${operation.process}\u0000${operation.key ?? ''}`;
    const list = groups.get(group) ?? [];
    list.push(operation);
    groups.set(group, list);
  }
  const result = { count: 0, sample: [] as SegmentResult['notIncreasing']['sample'] };
  for (const list of groups.values()) {
    const byComplete = [...list].sort((a, b) => a.completeMs - b.completeMs);
    const byInvoke = [...list].sort((a, b) => a.invokeMs - b.invokeMs);
    let highest: bigint | null = null;
    let next = 0;
    for (const operation of byInvoke) {
      while (next < byComplete.length && byComplete[next]!.completeMs < operation.invokeMs) {
        const top = maxOf(byComplete[next]!.ids);
        if (highest === null || top > highest) highest = top;
        next++;
      }
      const low = minOf(operation.ids);
      if (highest !== null && low <= highest) {
        result.count++;
        if (result.sample.length < 20) {
          result.sample.push({
            process: operation.process,
            tag: operation.key ?? '',
            before: highest,
            after: low,
          });
        }
      }
    }
  }
  return result;
}

function maxOf(ids: readonly bigint[]): bigint {
  return ids.reduce((a, b) => (b > a ? b : a));
}

function minOf(ids: readonly bigint[]): bigint {
  return ids.reduce((a, b) => (b < a ? b : a));
}

/** Outcome counts of one process (or of all). */
export interface AvailabilityCounts {
  readonly ok: number;
  readonly fail: number;
  readonly info: number;
  /** Error codes of `fail` and `info` operations, with counts. */
  readonly errors: Record<string, number>;
  /** Longest stretch without a successful operation inside the run's window. */
  readonly longestGapMs: number;
}

/** Availability, reported apart from safety: nothing here fails a safety check. */
export interface AvailabilitySummary extends AvailabilityCounts {
  readonly durationMs: number;
  readonly byProcess: Record<string, AvailabilityCounts>;
}

function counts(operations: readonly Operation[], from: number, to: number): AvailabilityCounts {
  const errors: Record<string, number> = {};
  const byType = { ok: 0, fail: 0, info: 0 };
  const okTimes: number[] = [];
  for (const operation of operations) {
    byType[operation.type]++;
    if (operation.type === 'ok') okTimes.push(operation.completeMs);
    else {
      const key = operation.error ?? 'unknown';
      errors[key] = (errors[key] ?? 0) + 1;
    }
  }
  okTimes.sort((a, b) => a - b);
  let longestGapMs = 0;
  let previous = from;
  for (const at of [...okTimes, to]) {
    longestGapMs = Math.max(longestGapMs, at - previous);
    previous = Math.max(previous, at);
  }
  return { ...byType, errors, longestGapMs };
}

/** Answers per outcome, per error code and per process, and the longest gap without one. */
export function availability(history: History): AvailabilitySummary {
  const operations = history.operations;
  if (operations.length === 0) {
    return { ok: 0, fail: 0, info: 0, errors: {}, longestGapMs: 0, durationMs: 0, byProcess: {} };
  }
  // A loop, not Math.min(...list): a long history would overflow the argument stack.
  let from = Infinity;
  let to = -Infinity;
  for (const operation of operations) {
    from = Math.min(from, operation.invokeMs);
    to = Math.max(to, operation.completeMs);
  }
  const byProcess: Record<string, AvailabilityCounts> = {};
  const names = [...new Set(operations.map((o) => o.process))].sort();
  for (const name of names) {
    byProcess[name] = counts(
      operations.filter((o) => o.process === name),
      from,
      to,
    );
  }
  return { ...counts(operations, from, to), durationMs: to - from, byProcess };
}
