/**
 * The record of a system test: every operation a client invoked against an application
 * process, with its outcome, in the Jepsen style (docs/reliability.md).
 */

/**
 * - `ok`: the process answered with IDs;
 * - `fail`: it definitely issued nothing (an error answer, a refused connection);
 * - `info`: the outcome is unknown (a timeout, a connection reset mid-request), so IDs may
 *   have been issued and lost.
 */
export type OperationType = 'ok' | 'fail' | 'info';

/** One request and its outcome. */
export interface Operation {
  /** The stable name of the instance (`p0`, `p1`...), the same across its restarts. */
  process: string;
  /** The route's name, e.g. `segment/get`, `snowflake/ids`. */
  route: string;
  /** Local time the request was sent (ms since the epoch). */
  invokeMs: number;
  /** Local time the answer (or the failure) arrived. */
  completeMs: number;
  type: OperationType;
  /** The IDs of an `ok` answer (a range route's IDs expanded), empty otherwise. */
  ids: bigint[];
  /** A `LEAF_...` code of an error answer, or the network error (`ECONNREFUSED`, `TIMEOUT`). */
  error?: string;
  /** The HTTP status of an answer (absent on a network error). */
  status?: number;
  /** The business tag or snowflake key the request named. */
  key?: string;
}

/** Bounds of a {@link History}. */
export interface HistoryLimits {
  /** Operations kept; further ones are counted in {@link History.dropped}. @default 2_000_000 */
  readonly maxOperations?: number;
  /** IDs kept over all operations. @default 20_000_000 */
  readonly maxIds?: number;
}

/**
 * An append-only, bounded list of {@link Operation}s. Past its bounds it keeps counting
 * but stores nothing more; a checker treats `dropped > 0` as a failure (IDs unchecked).
 */
export class History {
  private readonly list: Operation[] = [];
  private idCount = 0;
  private droppedCount = 0;
  private readonly maxOperations: number;
  private readonly maxIds: number;

  constructor(limits: HistoryLimits = {}) {
    this.maxOperations = limits.maxOperations ?? 2_000_000;
    this.maxIds = limits.maxIds ?? 20_000_000;
  }

  /** A history holding `operations` (for the checkers' tests). */
  static of(...operations: Operation[]): History {
    const history = new History();
    for (const operation of operations) history.append(operation);
    return history;
  }

  /** Records `operation`; past the bounds it is only counted. */
  append(operation: Operation): void {
    if (
      this.list.length >= this.maxOperations ||
      this.idCount + operation.ids.length > this.maxIds
    ) {
      this.droppedCount++;
      return;
    }
    this.list.push(operation);
    this.idCount += operation.ids.length;
  }

  /** Every operation kept, in the order they completed. */
  get operations(): readonly Operation[] {
    return this.list;
  }

  /** Number of operations kept. */
  get size(): number {
    return this.list.length;
  }

  /** IDs over all kept operations. */
  get ids(): number {
    return this.idCount;
  }

  /** Operations not kept because a bound was reached. */
  get dropped(): number {
    return this.droppedCount;
  }

  /** The operations for which `predicate` holds. */
  filter(predicate: (operation: Operation) => boolean): Operation[] {
    return this.list.filter(predicate);
  }
}
