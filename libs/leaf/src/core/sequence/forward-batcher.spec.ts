import { LeafErrorCode } from '../errors/leaf.error';
import { SequenceLeaseExpiredError } from '../errors/sequence.error';
import {
  ForwardBatcher,
  MAX_FORWARD_ITEMS,
  type ForwardItem,
  type ForwardResult,
  type SequenceForwardTransport,
} from './forward-batcher';

/** An issuer that hands out consecutive ranges per key and records every batch. */
function fakeIssuer(answer?: (items: readonly ForwardItem[]) => ForwardResult[]) {
  const sent: Array<{ address: string; items: readonly ForwardItem[] }> = [];
  let next = 100n;
  const transport: SequenceForwardTransport = {
    send: async (address, items) => {
      sent.push({ address, items });
      if (answer) return answer(items);
      return items.map(({ count }) => {
        const start = next;
        next += BigInt(count);
        return { start, end: next };
      });
    },
    close: () => undefined,
  };
  return { sent, transport };
}

/** The largest limits the service gives (`maxBatchSize` at its largest). */
const LIMITS = { maxItemCount: 1_000_000, maxItems: MAX_FORWARD_ITEMS };

describe('ForwardBatcher', () => {
  it('sends the calls of one event-loop turn as one request, one item per key, split in call order', async () => {
    const { sent, transport } = fakeIssuer();
    const sizes: Array<[number, number]> = [];
    const batcher = new ForwardBatcher(transport, LIMITS, {
      batchSent: (calls, items) => sizes.push([calls, items]),
    });
    const calls = [
      batcher.forward('http://a', 'k', 1),
      batcher.forward('http://a', 'j', 2),
      batcher.forward('http://a', 'k', 3),
      batcher.forward('http://b', 'k', 1),
    ];
    const ranges = await Promise.all(calls);
    expect(sent).toEqual([
      {
        address: 'http://a',
        items: [
          { key: 'k', count: 4 },
          { key: 'j', count: 2 },
        ],
      },
      { address: 'http://b', items: [{ key: 'k', count: 1 }] },
    ]);
    expect(ranges[0]).toEqual({ start: 100n, end: 101n });
    expect(ranges[2]).toEqual({ start: 101n, end: 104n });
    expect(ranges[1]).toEqual({ start: 104n, end: 106n });
    expect(sizes).toEqual([
      [3, 2],
      [1, 1],
    ]);
    // A later turn is a new request.
    await batcher.forward('http://a', 'k', 1);
    expect(sent).toHaveLength(3);
  });

  it('a failed delivery fails every call of the batch with LEAF_SEQUENCE_NO_ISSUER', async () => {
    const transport: SequenceForwardTransport = {
      send: () => Promise.reject(new Error('ECONNREFUSED')),
      close: () => undefined,
    };
    const batcher = new ForwardBatcher(transport, LIMITS);
    const outcomes = await Promise.allSettled([
      batcher.forward('http://a', 'k', 1),
      batcher.forward('http://a', 'j', 1),
    ]);
    for (const outcome of outcomes) {
      expect(outcome).toMatchObject({
        status: 'rejected',
        reason: { code: LeafErrorCode.SEQUENCE_NO_ISSUER },
      });
    }
  });

  it("passes the issuer's refusal of one key to that key's callers only", async () => {
    const { transport } = fakeIssuer((items) =>
      items.map((item) =>
        item.key === 'k'
          ? { error: new SequenceLeaseExpiredError('k', 'test') }
          : { start: 1n, end: 1n + BigInt(item.count) },
      ),
    );
    const batcher = new ForwardBatcher(transport, LIMITS);
    const [k, j] = await Promise.allSettled([
      batcher.forward('http://a', 'k', 1),
      batcher.forward('http://a', 'j', 1),
    ]);
    expect(k).toMatchObject({ reason: { code: LeafErrorCode.SEQUENCE_LEASE_EXPIRED } });
    expect(j).toEqual({ status: 'fulfilled', value: { start: 1n, end: 2n } });
  });

  it('refuses an answer whose range does not match the count asked for', async () => {
    const { transport } = fakeIssuer((items) => items.map(() => ({ start: 1n, end: 2n })));
    const batcher = new ForwardBatcher(transport, LIMITS);
    await expect(batcher.forward('http://a', 'k', 5)).rejects.toMatchObject({
      code: LeafErrorCode.SEQUENCE_NO_ISSUER,
    });
  });

  it('stays within the limits the issuer checks: merged counts up to maxItemCount, up to maxItems keys per request', async () => {
    const { sent, transport } = fakeIssuer();
    const batcher = new ForwardBatcher(transport, { maxItemCount: 10, maxItems: 2 });
    const ranges = await Promise.all([
      batcher.forward('http://a', 'k', 6),
      batcher.forward('http://a', 'k', 4),
      batcher.forward('http://a', 'k', 1), // 11 > 10: the pending 10 go on their own
      batcher.forward('http://a', 'j', 1),
      batcher.forward('http://a', 'i', 1), // a third key: the batch of two goes first
    ]);
    expect(sent.map(({ items }) => items)).toEqual([
      [{ key: 'k', count: 10 }],
      [
        { key: 'k', count: 1 },
        { key: 'j', count: 1 },
      ],
      [{ key: 'i', count: 1 }],
    ]);
    for (const { items } of sent) {
      expect(items.length).toBeLessThanOrEqual(2);
      expect(new Set(items.map((item) => item.key)).size).toBe(items.length);
      for (const item of items) expect(item.count).toBeLessThanOrEqual(10);
    }
    expect(ranges.map((range) => range.end - range.start)).toEqual([6n, 4n, 1n, 1n, 1n]);
  });
});
