import type { GaplessNumberRow, GaplessStore } from './gapless-store.port';
import { applyGaplessBatch, type GaplessNumber, type GaplessOp } from './gapless-batch';

interface Pending {
  readonly op: GaplessOp;
  resolve(value: GaplessNumber | number): void;
  reject(error: unknown): void;
}

/** What a {@link GaplessGroupCommit} reports, once per transaction (must not throw). */
export interface GaplessCommitObserver {
  /** A transaction of `series` committed; `settled`: the numbers it confirmed or voided. */
  committed(series: string, settled: readonly GaplessNumberRow[]): void;
  /** A transaction of `series` failed: nothing of it committed (or its answer was lost). */
  failed(series: string, error: unknown): void;
}

/** A series' requests and the transactions taking them. */
interface SeriesQueue {
  readonly pending: Pending[];
  /** Transactions started and not ended. */
  readonly running: Set<Promise<void>>;
  /** A transaction is waiting for the lock and will take the requests queued by then. */
  waiting: boolean;
}

/**
 * Group commit of a series' requests (docs/design.md, "Gapless numbers"): the requests that arrive
 * while a series' transaction runs wait, then go together in the next one, at most `maxBatch`
 * in it. That next transaction is started at once and waits for the series' lock, so it takes
 * the lock the moment the running one commits, and takes its requests then: a request waits
 * for at most the commit in progress and its own. Each caller is answered after its
 * transaction committed, never before. Queues exist only while a series has requests, so
 * naming series does not grow memory.
 */
export class GaplessGroupCommit {
  private readonly queues = new Map<string, SeriesQueue>();

  constructor(
    private readonly store: GaplessStore,
    private readonly maxBatch: number,
    private readonly observer?: GaplessCommitObserver,
  ) {}

  /**
   * `op` on `series`, in the next transaction of the series.
   * @throws the op's typed refusal, or the transaction's error (then nothing of it committed,
   *   or — a commit whose answer was lost — it may have: retry under the same key).
   */
  submit(series: string, op: GaplessOp): Promise<GaplessNumber | number> {
    return new Promise((resolve, reject) => {
      let queue = this.queues.get(series);
      if (!queue)
        this.queues.set(series, (queue = { pending: [], running: new Set(), waiting: false }));
      queue.pending.push({ op, resolve, reject });
      this.start(series, queue);
    });
  }

  /** Resolves when every request submitted so far is answered. */
  async idle(): Promise<void> {
    for (;;) {
      const running = [...this.queues.values()].flatMap((queue) => [...queue.running]);
      if (running.length === 0) return;
      await Promise.all(running);
    }
  }

  /** Starts a transaction for the queued requests unless one is waiting for them already. */
  private start(series: string, queue: SeriesQueue): void {
    if (queue.waiting || queue.pending.length === 0) return;
    queue.waiting = true;
    // Started behind a transaction of ours: it waits for that one's commit.
    const behind = queue.running.size > 0;
    const run: Promise<void> = this.commit(series, queue, behind).finally(() => {
      queue.running.delete(run);
      if (queue.running.size === 0 && queue.pending.length === 0) this.queues.delete(series);
      else this.start(series, queue);
    });
    queue.running.add(run);
  }

  private async commit(series: string, queue: SeriesQueue, behind: boolean): Promise<void> {
    let batch: Pending[] | null = null;
    /** The requests queued when the lock was taken (or not): this transaction's. */
    const take = () => {
      if (batch) return batch;
      batch = queue.pending.splice(0, this.maxBatch);
      queue.waiting = false;
      // More than a batch waits: the next transaction queues for the lock now.
      this.start(series, queue);
      return batch;
    };
    try {
      const settled: GaplessNumberRow[] = [];
      const outcomes = await this.store.withLock(series, (lock) => {
        settled.length = 0;
        const ops = take().map((pending) => pending.op);
        return ops.length === 0 ? Promise.resolve([]) : applyGaplessBatch(lock, ops, settled);
      });
      this.observer?.committed(series, settled);
      outcomes.forEach((outcome, i) =>
        outcome.ok ? batch![i]!.resolve(outcome.value) : batch![i]!.reject(outcome.error),
      );
    } catch (error) {
      // Started early, it gave up waiting for the lock behind a transaction of ours (a commit
      // slower than the lock wait): its requests go with the next one, as they would have if
      // it had not started early. The lock held by anyone else: refused.
      if (batch === null && behind) {
        queue.waiting = false;
        return;
      }
      this.observer?.failed(series, error);
      for (const pending of take()) pending.reject(error);
    }
  }
}
