import { assertValidCount, assertValidKey } from '../arguments';
import { InvalidArgumentError } from '../errors/invalid-argument.error';
import { SequenceNoIssuerError } from '../errors/sequence.error';
import { monotonicMs, type LeafObserver } from '../leaf-observer';
import { messageOf } from '../errors/leaf.error';

/** One key's share of a forwarded batch: `count` IDs, answered as one range or an error. */
export interface ForwardItem {
  readonly key: string;
  readonly count: number;
}

/** The issuer's answer for one {@link ForwardItem}. */
export type ForwardResult =
  { readonly start: bigint; readonly end: bigint } | { readonly error: Error };

/**
 * Sends one batch to the issuer at `address` (keep-alive HTTP in the library,
 * `adapters/http/sequence-forward.transport.ts`; a fake in tests). Resolves with one result
 * per item, in order; rejects when the batch as a whole failed (connection, timeout).
 */
export interface SequenceForwardTransport {
  send(address: string, items: readonly ForwardItem[]): Promise<ForwardResult[]>;
  /**
   * The run identity (`SequenceService.run`) of the instance that answers at `address`, and the
   * groups it issues for now: how an instance checks that its advertised address reaches
   * itself, and whether an issuer that did not answer, or refused, serves again. Without it,
   * these checks are skipped.
   * @throws when nothing answers there.
   */
  probe?(address: string): Promise<{ run: string; serving: readonly number[] }>;
  close(): void;
}

/** Told of each batch sent (metrics) and of how it went (the issuer's reachability). */
export interface ForwardBatchListener {
  batchSent?(calls: number, items: number): void;
  /** The issuer at `address` answered the batch (with ranges or refusals). */
  delivered?(address: string): void;
  /** The batch could not be delivered to `address` (connection, timeout, malformed answer). */
  undelivered?(address: string, error: unknown): void;
  /** The batch finished: answered (`error` null), or not delivered. */
  batchDone?: LeafObserver['batchForwarded'];
}

/** Most items (keys) one forwarded batch carries; more go in another request. */
export const MAX_FORWARD_ITEMS = 1000;

/**
 * How large a batch may grow: the issuer refuses anything larger (`SequenceService.issueForwarded`),
 * so both read the same options.
 */
export interface ForwardLimits {
  /** The largest count of one item: calls of one key are merged up to it (`maxBatchSize`). */
  readonly maxItemCount: number;
  /** The most items (distinct keys) of one request. */
  readonly maxItems: number;
}

/**
 * What the issuer serves of a forwarded batch (`SequenceService.issueForwarded`): no more than
 * a {@link ForwardBatcher} with the same `limits` sends — 1..`maxItems` items, each a valid key
 * named once, each count in 1..`maxItemCount`. Checked as a whole before any item is served.
 * @throws {InvalidArgumentError} for anything else.
 */
export function assertForwardedBatch(items: readonly ForwardItem[], limits: ForwardLimits): void {
  if (items.length < 1 || items.length > limits.maxItems) {
    throw new InvalidArgumentError(`a batch has 1..${limits.maxItems} items`, 'keys');
  }
  const keys = new Set<string>();
  for (const item of items) {
    assertValidKey(item.key);
    assertValidCount(item.count, limits.maxItemCount);
    if (keys.has(item.key)) {
      throw new InvalidArgumentError(`a batch names each key once ("${item.key}" twice)`, 'keys');
    }
    keys.add(item.key);
  }
}

interface Waiter {
  readonly count: number;
  readonly resolve: (range: { start: bigint; end: bigint }) => void;
  readonly reject: (error: Error) => void;
}

interface Pending {
  readonly key: string;
  total: number;
  readonly waiters: Waiter[];
}

/**
 * Coalesces the forwarded calls of one event-loop turn (docs/design.md, "Sequence mode"):
 * calls to one issuer made before the next `setImmediate` callback runs go out as one request,
 * with the calls of one key summed into one item, within {@link ForwardLimits}. The issuer
 * answers each item with one contiguous range, which is split among the item's callers in the
 * order they called. All of them were in flight together, so any split keeps the real-time
 * order.
 */
export class ForwardBatcher {
  private readonly queues = new Map<string, Map<string, Pending>>();
  private scheduled = false;

  constructor(
    private readonly transport: SequenceForwardTransport,
    private readonly limits: ForwardLimits,
    private readonly listener: ForwardBatchListener | null = null,
  ) {}

  /**
   * `count` consecutive IDs of `key` from the issuer at `address`.
   * @throws {LeafError} the issuer's refusal for this key; {@link SequenceNoIssuerError}
   *   when the batch could not be delivered.
   */
  forward(address: string, key: string, count: number): Promise<{ start: bigint; end: bigint }> {
    return new Promise((resolve, reject) => {
      let queue = this.queues.get(address);
      if (!queue) {
        queue = new Map();
        this.queues.set(address, queue);
      }
      let pending = queue.get(key);
      if (pending && pending.total + count > this.limits.maxItemCount) {
        // Too large for one item: send what is pending for the key on its own, now.
        queue.delete(key);
        void this.send(address, [pending]);
        pending = undefined;
      }
      if (!pending) {
        if (queue.size >= this.limits.maxItems) {
          // A full batch goes now; this key starts the next one.
          void this.send(address, [...queue.values()]);
          queue.clear();
        }
        pending = { key, total: 0, waiters: [] };
        queue.set(key, pending);
      }
      pending.total += count;
      pending.waiters.push({ count, resolve, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  /** Sends everything queued now (one request per issuer). */
  flush(): void {
    this.scheduled = false;
    const queues = [...this.queues];
    this.queues.clear();
    for (const [address, queue] of queues) void this.send(address, [...queue.values()]);
  }

  private async send(address: string, batch: Pending[]): Promise<void> {
    const calls = batch.reduce((sum, pending) => sum + pending.waiters.length, 0);
    this.listener?.batchSent?.(calls, batch.length);
    const started = this.listener?.batchDone ? monotonicMs() : 0;
    let results: ForwardResult[];
    try {
      results = await this.transport.send(
        address,
        batch.map(({ key, total }) => ({ key, count: total })),
      );
      if (results.length !== batch.length) {
        throw new Error(`the issuer answered ${results.length} items for ${batch.length}`);
      }
      results.forEach((result, i) => {
        if (!('error' in result) && result.end - result.start !== BigInt(batch[i]!.total)) {
          throw new Error(`the issuer answered a range of the wrong size for "${batch[i]!.key}"`);
        }
      });
    } catch (error) {
      this.listener?.undelivered?.(address, error);
      this.listener?.batchDone?.(address, calls, batch.length, monotonicMs() - started, error);
      for (const pending of batch) {
        const failure = new SequenceNoIssuerError(
          pending.key,
          `forwarding to ${address} failed: ${messageOf(error)}`,
          { cause: error },
        );
        for (const waiter of pending.waiters) waiter.reject(failure);
      }
      return;
    }
    this.listener?.delivered?.(address);
    this.listener?.batchDone?.(address, calls, batch.length, monotonicMs() - started, null);
    batch.forEach((pending, i) => {
      const result = results[i]!;
      if ('error' in result) {
        for (const waiter of pending.waiters) waiter.reject(result.error);
        return;
      }
      let next = result.start;
      for (const waiter of pending.waiters) {
        const end = next + BigInt(waiter.count);
        waiter.resolve({ start: next, end });
        next = end;
      }
    });
  }
}
