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

/**
 * Group commit of a series' requests (docs/gapless.md, "Design"): the requests that arrive
 * while a series' transaction runs wait, then go together in the next one — at most one
 * transaction per series per instance at a time, at most `maxBatch` requests in it. Each
 * caller is answered after its transaction committed, never before. Queues exist only while
 * a series has requests, so naming series does not grow memory.
 */
export class GaplessGroupCommit {
  private readonly queues = new Map<string, Pending[]>();
  private readonly running = new Map<string, Promise<void>>();

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
      if (!queue) this.queues.set(series, (queue = []));
      queue.push({ op, resolve, reject });
      // Requests of the same turn join the first transaction.
      if (!this.running.has(series)) {
        const run = Promise.resolve().then(() => this.drainSeries(series));
        this.running.set(series, run);
      }
    });
  }

  /** Resolves when every request submitted so far is answered. */
  async idle(): Promise<void> {
    while (this.running.size > 0) await Promise.all([...this.running.values()]);
  }

  private async drainSeries(series: string): Promise<void> {
    try {
      for (;;) {
        const queue = this.queues.get(series);
        if (!queue || queue.length === 0) break;
        const batch = queue.splice(0, this.maxBatch);
        await this.commit(series, batch);
      }
    } finally {
      this.queues.delete(series);
      this.running.delete(series);
    }
  }

  private async commit(series: string, batch: Pending[]): Promise<void> {
    try {
      const settled: GaplessNumberRow[] = [];
      const outcomes = await this.store.withLock(series, (lock) => {
        settled.length = 0;
        return applyGaplessBatch(
          lock,
          batch.map((pending) => pending.op),
          settled,
        );
      });
      this.observer?.committed(series, settled);
      outcomes.forEach((outcome, i) =>
        outcome.ok ? batch[i]!.resolve(outcome.value) : batch[i]!.reject(outcome.error),
      );
    } catch (error) {
      this.observer?.failed(series, error);
      for (const pending of batch) pending.reject(error);
    }
  }
}
