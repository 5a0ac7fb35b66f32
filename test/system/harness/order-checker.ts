/**
 * The order checker of sequence mode (docs/design.md, "Sequence mode"; docs/reliability.md):
 * for every key, every pair of calls that did not overlap in real time — one answered before
 * the other was sent, as the client saw it — must have returned increasing IDs: every ID of
 * the earlier call below every ID of the later one. Plus no ID twice and increasing IDs
 * within each answer. Calls whose outcome is unknown (`info`) and failures carry no IDs and
 * take no part.
 *
 * The client's clock brackets the server's work: a request is sent before the server begins
 * it and the answer arrives after the server ended it, so calls that did not overlap at the
 * client did not overlap at the server either. Times are whole milliseconds, so two calls
 * count as ordered only when the first completed in a strictly earlier millisecond.
 */
import type { History, Operation } from './history';

/** One pair of calls in the wrong order. */
export interface OrderViolation {
  readonly key: string;
  /** The call that completed first, and the highest ID it returned. */
  readonly earlier: { process: string; invokeMs: number; completeMs: number; maxId: bigint };
  /** The call sent after that, and the lowest ID it returned. */
  readonly later: { process: string; invokeMs: number; completeMs: number; minId: bigint };
}

/** Result of {@link checkOrder}. */
export interface OrderResult {
  /** Calls with IDs that took part. */
  readonly calls: number;
  /** Pairs of non-overlapping calls compared (each against every call completed before it began). */
  readonly pairsChecked: number;
  /** Calls that returned an ID not above some call completed before they began. */
  readonly violationCount: number;
  /** The first few, for the report. */
  readonly violations: OrderViolation[];
  /** IDs returned twice (for the same key). */
  readonly duplicateCount: number;
  /** Answers whose own IDs did not increase. */
  readonly unorderedAnswers: number;
}

const EXAMPLES = 10;

interface Call {
  readonly op: Operation;
  readonly min: bigint;
  readonly max: bigint;
}

/** Checks the real-time order of every key's calls in `history` (operations of `routes` only, when given). */
export function checkOrder(history: History, routes?: readonly string[]): OrderResult {
  const byKey = new Map<string, Call[]>();
  let unorderedAnswers = 0;
  for (const op of history.operations) {
    if (op.type !== 'ok' || op.ids.length === 0) continue;
    if (routes && !routes.includes(op.route)) continue;
    let min = op.ids[0]!;
    let max = op.ids[0]!;
    for (let i = 1; i < op.ids.length; i++) {
      const id = op.ids[i]!;
      if (id <= op.ids[i - 1]!) unorderedAnswers++;
      if (id < min) min = id;
      if (id > max) max = id;
    }
    const key = op.key ?? '';
    let calls = byKey.get(key);
    if (!calls) byKey.set(key, (calls = []));
    calls.push({ op, min, max });
  }
  let calls = 0;
  let pairsChecked = 0;
  let violationCount = 0;
  let duplicateCount = 0;
  const violations: OrderViolation[] = [];
  for (const [key, list] of byKey) {
    calls += list.length;
    const seen = new Set<bigint>();
    for (const call of list) {
      for (const id of call.op.ids) {
        if (seen.has(id)) duplicateCount++;
        else seen.add(id);
      }
    }
    const byInvoke = [...list].sort((a, b) => a.op.invokeMs - b.op.invokeMs);
    const byComplete = [...list].sort((a, b) => a.op.completeMs - b.op.completeMs);
    // Sweep: for each call in order of sending, the calls completed strictly before it was sent.
    let done = 0;
    let highest: Call | null = null;
    for (const later of byInvoke) {
      while (done < byComplete.length && byComplete[done]!.op.completeMs < later.op.invokeMs) {
        const earlier = byComplete[done++]!;
        if (highest === null || earlier.max > highest.max) highest = earlier;
      }
      pairsChecked += done;
      if (highest !== null && later.min <= highest.max) {
        violationCount++;
        if (violations.length < EXAMPLES) {
          violations.push({
            key,
            earlier: {
              process: highest.op.process,
              invokeMs: highest.op.invokeMs,
              completeMs: highest.op.completeMs,
              maxId: highest.max,
            },
            later: {
              process: later.op.process,
              invokeMs: later.op.invokeMs,
              completeMs: later.op.completeMs,
              minId: later.min,
            },
          });
        }
      }
    }
  }
  return { calls, pairsChecked, violationCount, violations, duplicateCount, unorderedAnswers };
}
