import { History, type Operation } from './history';
import { checkOrder } from './order-checker';

const call = (
  process: string,
  ids: bigint[],
  invokeMs: number,
  completeMs: number,
  overrides: Partial<Operation> = {},
): Operation => ({
  process,
  route: 'sequence/get',
  key: 'k',
  invokeMs,
  completeMs,
  type: 'ok',
  ids,
  ...overrides,
});

const historyOf = (...operations: Operation[]): History => History.of(...operations);

describe('checkOrder', () => {
  it('passes calls that increase in real-time order across processes', () => {
    const result = checkOrder(
      historyOf(
        call('p0', [1n], 0, 5),
        call('p1', [2n, 3n], 6, 9),
        call('p2', [4n], 10, 12),
        call('p0', [5n], 13, 14),
      ),
    );
    expect(result).toMatchObject({
      calls: 4,
      pairsChecked: 6,
      violationCount: 0,
      duplicateCount: 0,
      unorderedAnswers: 0,
    });
  });

  it('FAILS when a call that began after another ended returned a smaller ID (a real violation)', () => {
    const result = checkOrder(
      historyOf(
        call('p0', [10n], 0, 5),
        // Sent after p0's answer arrived, on another instance, and lower: an issuer that kept
        // issuing from an old range after its successor started.
        call('p1', [7n], 6, 8),
      ),
    );
    expect(result.violationCount).toBe(1);
    expect(result.violations[0]).toEqual({
      key: 'k',
      earlier: { process: 'p0', invokeMs: 0, completeMs: 5, maxId: 10n },
      later: { process: 'p1', invokeMs: 6, completeMs: 8, minId: 7n },
    });
  });

  it('FAILS when a later batch starts inside an earlier one, and counts a repeated ID', () => {
    const result = checkOrder(
      historyOf(call('p0', [1n, 2n, 3n], 0, 2), call('p1', [3n, 4n], 3, 4)),
    );
    expect(result.violationCount).toBe(1);
    expect(result.duplicateCount).toBe(1);
  });

  it('compares a call with the highest ID of everything completed before it, not only the last', () => {
    const result = checkOrder(
      historyOf(call('p0', [50n], 0, 2), call('p1', [20n], 1, 3), call('p2', [30n], 4, 5)),
    );
    // p2 began after both ended; 30 < 50.
    expect(result.violationCount).toBe(1);
    expect(result.violations[0]!.earlier.maxId).toBe(50n);
  });

  it('allows any order between overlapping calls, and between calls in the same millisecond', () => {
    const result = checkOrder(
      historyOf(
        call('p0', [9n], 0, 10),
        call('p1', [3n], 2, 5), // overlaps p0
        call('p2', [8n], 5, 7), // sent in the millisecond p1 completed: not ordered after it
      ),
    );
    expect(result.violationCount).toBe(0);
  });

  it('keeps keys apart, and ignores failures and unknown outcomes', () => {
    const result = checkOrder(
      historyOf(
        call('p0', [10n], 0, 1, { key: 'a' }),
        call('p0', [1n], 2, 3, { key: 'b' }),
        call('p1', [], 4, 5, { type: 'fail', error: 'LEAF_SEQUENCE_NO_ISSUER' }),
        call('p1', [], 4, 5, { type: 'info', error: 'TIMEOUT' }),
      ),
    );
    expect(result).toMatchObject({ calls: 2, violationCount: 0, duplicateCount: 0 });
  });

  it('reports an answer whose own IDs do not increase', () => {
    expect(checkOrder(historyOf(call('p0', [5n, 4n], 0, 1))).unorderedAnswers).toBe(1);
  });
});
