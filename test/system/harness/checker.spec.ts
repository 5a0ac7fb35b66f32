import {
  availability,
  checkSegment,
  checkUnique,
  idsOutside,
  type CommittedRange,
} from './checker';
import { History, type Operation } from './history';

const op = (
  process: string,
  ids: bigint[],
  invokeMs: number,
  completeMs = invokeMs + 1,
  overrides: Partial<Operation> = {},
): Operation => ({
  process,
  route: 'segment/get',
  key: 't',
  invokeMs,
  completeMs,
  type: 'ok',
  ids,
  ...overrides,
});

const range = (start: bigint, end: bigint, seq: number, tag = 't'): CommittedRange => ({
  tag,
  start,
  end,
  seq,
});

const historyOf = (...operations: Operation[]): History => History.of(...operations);

describe('checkUnique', () => {
  it('finds an ID issued twice, by whom, per namespace', () => {
    const history = historyOf(
      op('p0', [1n, 2n], 0),
      op('p1', [2n, 3n], 1),
      op('p1', [2n], 2, 3, { key: 'other' }), // another tag: its own namespace
      op('p0', [7n], 3, 4, { route: 'snowflake/get', key: 'a' }),
      op('p1', [7n], 4, 5, { route: 'snowflake/get', key: 'b' }), // snowflake: one namespace
      op('p1', [3n], 5, 6, { type: 'info', ids: [] }),
    );
    const result = checkUnique(history);
    expect(result.valid).toBe(false);
    expect(result.ids).toBe(7);
    expect(result.duplicateCount).toBe(2);
    expect(result.duplicates).toEqual([
      { namespace: 'segment:t', id: 2n, count: 2, processes: ['p0', 'p1'] },
      { namespace: 'snowflake', id: 7n, count: 2, processes: ['p0', 'p1'] },
    ]);
  });

  it('is invalid when the history dropped operations', () => {
    const history = new History({ maxOperations: 1 });
    history.append(op('p0', [1n], 0));
    history.append(op('p0', [2n], 1));
    expect(checkUnique(history)).toMatchObject({ valid: false, duplicateCount: 0, dropped: 1 });
  });
});

describe('checkSegment', () => {
  it('accepts IDs inside disjoint committed ranges, increasing per instance', () => {
    const history = historyOf(op('p0', [1n, 2n], 0), op('p1', [11n], 1), op('p0', [3n], 5));
    const result = checkSegment(history, [range(1n, 11n, 1), range(11n, 21n, 2)]);
    expect(result).toMatchObject({ valid: true, ids: 4, overlapCount: 0 });
    expect(result.outside.count).toBe(0);
  });

  it('reports IDs outside every range, overlapping ranges and a decrease', () => {
    const history = historyOf(
      op('p0', [5n], 0, 1),
      op('p0', [4n], 2, 3), // began after 5 completed, yet smaller
      op('p0', [30n], 4, 5), // never committed
    );
    const result = checkSegment(history, [range(1n, 11n, 1), range(8n, 18n, 2)]);
    expect(result.valid).toBe(false);
    expect(result.outside).toEqual({ count: 1, sample: [30n] });
    expect(result.overlapCount).toBe(1);
    expect(result.idsInOverlap).toBe(0);
    expect(result.notIncreasing.sample).toEqual([
      { process: 'p0', tag: 't', before: 5n, after: 4n },
    ]);
  });

  it('does not order concurrent operations, nor the range route', () => {
    const history = historyOf(
      op('p0', [5n], 0, 10),
      op('p0', [4n], 1, 9), // overlapping in time: no order
      op('p0', [1n], 20, 21, { route: 'segment/range' }),
    );
    expect(checkSegment(history, [range(1n, 11n, 1)]).valid).toBe(true);
  });
});

describe('idsOutside and availability', () => {
  it('lists IDs outside the given ranges', () => {
    const history = historyOf(op('p0', [1n, 15n], 0));
    expect(idsOutside(history.operations, [range(11n, 21n, 2)])).toEqual([1n]);
  });

  it('counts outcomes and the longest gap without a success', () => {
    const history = historyOf(
      op('p0', [1n], 0, 10),
      op('p0', [], 10, 20, { type: 'fail', error: 'LEAF_SEGMENT_NOT_READY' }),
      op('p1', [2n], 100, 110),
    );
    const result = availability(history);
    expect(result).toMatchObject({ ok: 2, fail: 1, info: 0, longestGapMs: 100, durationMs: 110 });
    expect(result.errors).toEqual({ LEAF_SEGMENT_NOT_READY: 1 });
    expect(result.byProcess.p1).toMatchObject({ ok: 1, longestGapMs: 110 });
  });
});
