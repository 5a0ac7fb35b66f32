/**
 * The snowflake part of the system tests' checker (docs/reliability.md): every successful
 * snowflake ID decodes, with the library's own layout, to
 *
 * - the worker ID of the instance that answered;
 * - a millisecond inside the request's window `[invokeMs - skew, completeMs + skew]`,
 *   shifted by the instance's known clock offset when a test fakes its clock;
 *
 * and, per instance, IDs grow in real-time order (an answer completed before a request
 * was sent holds only smaller IDs), and no millisecond of a worker ID is issued by two
 * instances (the invariant of docs/design.md, "Snowflake safety", which is stronger than
 * "no duplicate ID"). Uniqueness itself is `checkUnique` of `checker.ts`.
 */
import { DEFAULT_SNOWFLAKE_EPOCH, SnowflakeLayout } from 'nestjs-leaf';
import { type SnowflakeLayoutSpec } from 'nestjs-leaf/server';
import type { Operation } from './history';

/** The fields of a recorded operation this checker reads. */
export type SnowflakeOperation = Pick<
  Operation,
  'process' | 'route' | 'invokeMs' | 'completeMs' | 'type' | 'ids'
>;

/** From `fromMs` (test-runner time) on, the instance's wall clock reads real time + `offsetMs`. */
export interface ClockOffset {
  readonly fromMs: number;
  readonly offsetMs: number;
}

/** What the checker needs to know about the instances. */
export interface SnowflakeCheckOptions {
  /** Worker ID of each instance (by process name) that answered with snowflake IDs. */
  readonly workerIds: Readonly<Record<string, number>>;
  /**
   * Clock offsets of instances whose clock a test faked, in the order they were set; an
   * instance not listed reads real time. Before its first entry an instance reads real time.
   */
  readonly clockOffsets?: Readonly<Record<string, readonly ClockOffset[]>>;
  /**
   * How long after a change both the old and the new offset are accepted: libfaketime
   * re-reads its offset file at most this late (`FaketimeClock`'s cache, 1 s).
   * @default 1500
   */
  readonly offsetChangeMs?: number;
  /** Slack on both ends of a request window (both clocks are this host's). @default 20 */
  readonly skewMs?: number;
  /** Which routes answer snowflake IDs. @default the `snowflake/...` routes of `load.ts` */
  readonly isSnowflakeRoute?: (route: string) => boolean;
  /** The layout's epoch. @default Leaf's, 1288834974657 */
  readonly epoch?: number;
  /** The bit split the instances run with. @default Leaf's (`LEAF_LAYOUT`) */
  readonly layout?: SnowflakeLayoutSpec;
  /** At most this many examples per kind of violation are kept. @default 20 */
  readonly maxExamples?: number;
}

/** One violation, with enough context to read it in a failure message. */
export interface SnowflakeViolation {
  readonly process: string;
  readonly id: string;
  readonly detail: string;
}

/** The outcome; `valid` when every list is empty. */
export interface SnowflakeCheckResult {
  readonly valid: boolean;
  /** Successful snowflake operations and the IDs they carried. */
  readonly operations: number;
  readonly ids: number;
  /** Per instance: IDs checked and the decoded millisecond range. */
  readonly perProcess: Record<string, { ids: number; firstMs: number; lastMs: number }>;
  readonly wrongWorker: { count: number; examples: SnowflakeViolation[] };
  readonly outsideWindow: { count: number; examples: SnowflakeViolation[] };
  readonly notIncreasing: { count: number; examples: SnowflakeViolation[] };
  /** Milliseconds of one worker ID issued by more than one instance. */
  readonly sharedMilliseconds: { count: number; examples: SnowflakeViolation[] };
}

class Violations {
  count = 0;
  readonly examples: SnowflakeViolation[] = [];
  constructor(private readonly max: number) {}
  add(process: string, id: bigint, detail: string): void {
    this.count++;
    if (this.examples.length < this.max) this.examples.push({ process, id: String(id), detail });
  }
}

/** Checks the snowflake operations of `history` (e.g. `History.operations`); see the top of this file. */
export function checkSnowflake(
  history: Iterable<SnowflakeOperation>,
  options: SnowflakeCheckOptions,
): SnowflakeCheckResult {
  const layout = new SnowflakeLayout(options.epoch ?? DEFAULT_SNOWFLAKE_EPOCH, options.layout);
  const skew = options.skewMs ?? 20;
  const changeMs = options.offsetChangeMs ?? 1500;
  const isSnowflake =
    options.isSnowflakeRoute ?? ((route: string) => route.startsWith('snowflake/'));
  const max = options.maxExamples ?? 20;
  const wrongWorker = new Violations(max);
  const outsideWindow = new Violations(max);
  const notIncreasing = new Violations(max);
  const sharedMilliseconds = new Violations(max);
  const perProcess: SnowflakeCheckResult['perProcess'] = {};
  const byProcess = new Map<string, SnowflakeOperation[]>();
  /** `workerId:ms` → the first instance seen issuing in it. */
  const owners = new Map<string, string>();
  let operations = 0;
  let ids = 0;

  for (const op of history) {
    if (op.type !== 'ok' || !isSnowflake(op.route) || op.ids.length === 0) continue;
    operations++;
    ids += op.ids.length;
    let list = byProcess.get(op.process);
    if (!list) byProcess.set(op.process, (list = []));
    list.push(op);
    const expectedWorker = options.workerIds[op.process];
    const [minOffset, maxOffset] = offsetRange(
      options.clockOffsets?.[op.process] ?? [],
      op,
      changeMs,
    );
    const low = op.invokeMs + minOffset - skew;
    const high = op.completeMs + maxOffset + skew;
    const stats = (perProcess[op.process] ??= { ids: 0, firstMs: Infinity, lastMs: -Infinity });
    let previous = -1n;
    for (const id of op.ids) {
      const { timestamp, workerId } = layout.decode(id);
      stats.ids++;
      stats.firstMs = Math.min(stats.firstMs, timestamp);
      stats.lastMs = Math.max(stats.lastMs, timestamp);
      if (workerId !== expectedWorker) {
        wrongWorker.add(
          op.process,
          id,
          `worker ID ${workerId}, the instance holds ${expectedWorker}`,
        );
      }
      if (timestamp < low || timestamp > high) {
        outsideWindow.add(
          op.process,
          id,
          `millisecond ${timestamp} outside [${low}, ${high}] (request ${op.invokeMs}..${op.completeMs}, ` +
            `clock offset ${minOffset}..${maxOffset} ms)`,
        );
      }
      if (id <= previous)
        notIncreasing.add(op.process, id, `not above ${previous} within one answer`);
      previous = id;
      const key = `${workerId}:${timestamp}`;
      const owner = owners.get(key);
      if (owner === undefined) owners.set(key, op.process);
      else if (owner !== op.process) {
        sharedMilliseconds.add(
          op.process,
          id,
          `worker ID ${workerId}, millisecond ${timestamp} also issued by ${owner}`,
        );
      }
    }
  }

  for (const [process, list] of byProcess) checkRealTimeOrder(process, list, notIncreasing);

  return {
    valid:
      wrongWorker.count + outsideWindow.count + notIncreasing.count + sharedMilliseconds.count ===
      0,
    operations,
    ids,
    perProcess,
    wrongWorker: { count: wrongWorker.count, examples: wrongWorker.examples },
    outsideWindow: { count: outsideWindow.count, examples: outsideWindow.examples },
    notIncreasing: { count: notIncreasing.count, examples: notIncreasing.examples },
    sharedMilliseconds: { count: sharedMilliseconds.count, examples: sharedMilliseconds.examples },
  };
}

/**
 * The lowest and highest offset the instance's clock may have had during `op`: every
 * offset in effect at some moment of `[invokeMs - changeMs, completeMs]`.
 */
function offsetRange(
  offsets: readonly ClockOffset[],
  op: SnowflakeOperation,
  changeMs: number,
): [number, number] {
  let inEffect = 0; // real time before the first entry
  let min = Infinity;
  let max = -Infinity;
  const from = op.invokeMs - changeMs;
  for (const { fromMs, offsetMs } of offsets) {
    if (fromMs <= from) {
      inEffect = offsetMs;
    } else if (fromMs <= op.completeMs) {
      min = Math.min(min, offsetMs);
      max = Math.max(max, offsetMs);
    }
  }
  return [Math.min(min, inEffect), Math.max(max, inEffect)];
}

/**
 * Per instance: an answer that completed before another request was sent holds only IDs
 * below that request's. Sweeps the requests by send time with the largest ID of every
 * answer completed before it.
 */
function checkRealTimeOrder(
  process: string,
  list: readonly SnowflakeOperation[],
  violations: Violations,
): void {
  const byInvoke = [...list].sort((a, b) => a.invokeMs - b.invokeMs);
  const byComplete = [...list].sort((a, b) => a.completeMs - b.completeMs);
  let done = 0;
  let largest = -1n;
  for (const op of byInvoke) {
    while (done < byComplete.length && byComplete[done]!.completeMs < op.invokeMs) {
      const last = byComplete[done]!.ids.at(-1)!;
      if (last > largest) largest = last;
      done++;
    }
    const first = op.ids[0]!;
    if (first <= largest) {
      violations.add(
        process,
        first,
        `not above ${largest}, issued by an answer completed before this request`,
      );
    }
  }
}
