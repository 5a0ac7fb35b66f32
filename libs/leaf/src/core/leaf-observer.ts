import type { LeafMode } from './id.service';
/**
 * Events the core reports for metrics and logs, off the hot path: where a range load or a
 * lease extension completes, and where a request is refused (not ready, clock behind). The
 * Nest layer implements it (`LeafEventRecorder`); the core never depends on a metrics
 * library. Every method is optional and must not throw.
 */
export interface LeafObserver {
  /**
   * A range allocation of `tag` finished after `durationMs` (the store call itself); `detail`
   * says what was asked and what came back (the range, or the error).
   */
  rangeLoaded?(tag: string, durationMs: number, ok: boolean, detail?: RangeLoadDetail): void;
  /**
   * A lease extension finished after `durationMs`: made durable, durable locally only, or
   * failed (`error` set).
   */
  leaseExtended?(durationMs: number, outcome: 'ok' | 'degraded' | 'error', error?: unknown): void;
  /** This instance became the issuer of sequence group `group` (term `term`). */
  issuerElected?(group: number, term: number): void;
  /** This instance stopped issuing for sequence group `group`, for `reason`. */
  issuerDemoted?(group: number, reason: string): void;
  /**
   * A batch of `calls` forwarded sequence calls (`items` keys) to the issuer at `address`
   * finished after `durationMs`: answered (`error` null), or not delivered.
   */
  batchForwarded?(
    address: string,
    calls: number,
    items: number,
    durationMs: number,
    error: unknown,
  ): void;
  /** A request was answered "not ready" (no ID in memory / none without waiting). */
  notReady?(mode: LeafMode, tag: string | null): void;
  /** The clock read earlier than the last issued millisecond: waited out, or refused. */
  clockBackwards?(offsetMs: number, outcome: 'waited' | 'refused'): void;
  /**
   * `max_id` of `tag` was found below what was already granted: by the high-water mark
   * (`cause` `regression`, or `unconfirmed-commit` when the gap is this instance's own
   * uncommitted allocation; `repaired` true: the same allocation moved `max_id` above it), or
   * by the in-memory range guard (`range-guard`: the range was refused, `repaired` false).
   */
  maxIdRegression?(
    tag: string,
    cause: 'regression' | 'unconfirmed-commit' | 'range-guard',
    repaired: boolean,
  ): void;
  /**
   * A reserved number of gapless `series` was confirmed or voided (`reason`: `expired` for a
   * TTL that ran out) `ageMs` after its reservation, on the database's clock; reported once
   * its transaction committed.
   */
  gaplessSettled?(
    series: string,
    state: 'confirmed' | 'voided',
    reason: string | null,
    ageMs: number,
  ): void;
}

/** What a range load asked for and got (see {@link LeafObserver.rangeLoaded}). */
export interface RangeLoadDetail {
  /** `segment` for a segment tag, `sequence` for a sequence key's issuer load. */
  readonly mode: 'segment' | 'sequence';
  /** The step asked for, or undefined (the row's own step). */
  readonly step: number | undefined;
  /** The IDs granted, `[start, end)`, when the load succeeded. */
  readonly range: { readonly start: bigint; readonly end: bigint } | null;
  /** The store's error when it failed. */
  readonly error: unknown;
}

/** Milliseconds since an arbitrary origin, for durations (`performance.now()`). */
export function monotonicMs(): number {
  return performance.now();
}
