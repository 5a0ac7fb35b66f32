import { DEFAULT_SNOWFLAKE_EPOCH, SnowflakeLayout } from 'nestjs-leaf';
import { JS_SAFE_EPOCH } from 'nestjs-leaf/server';
import { JS_SAFE_LAYOUT } from '@app/leaf/core/snowflake/snowflake-layout';
import { checkSnowflake, type SnowflakeOperation } from './snowflake-checker';

const layout = new SnowflakeLayout(DEFAULT_SNOWFLAKE_EPOCH);
const T = 1_800_000_000_000;

function op(
  process: string,
  invokeMs: number,
  completeMs: number,
  ids: Array<[ms: number, worker: number, sequence: number]>,
  type: SnowflakeOperation['type'] = 'ok',
): SnowflakeOperation {
  return {
    process,
    route: 'snowflake/ids',
    invokeMs,
    completeMs,
    type,
    ids: ids.map(([ms, worker, sequence]) => layout.compose(ms, worker, sequence)),
  };
}

describe('checkSnowflake', () => {
  const workerIds = { p0: 0, p1: 1 };

  it('accepts IDs of the right worker inside their request windows, increasing per instance', () => {
    const result = checkSnowflake(
      [
        op('p0', T, T + 5, [
          [T + 1, 0, 7],
          [T + 1, 0, 8],
          [T + 4, 0, 1],
        ]),
        op('p1', T, T + 5, [[T + 2, 1, 3]]),
        op('p0', T + 6, T + 9, [[T + 8, 0, 0]]),
        // failed and unknown outcomes carry no IDs and are not checked
        op('p0', T, T + 1, [], 'fail'),
        op('p0', T, T + 1, [], 'info'),
        { ...op('p0', T, T + 1, [[T - 99_999, 5, 0]]), route: 'segment/ids' },
      ],
      { workerIds },
    );
    expect(result).toMatchObject({
      valid: true,
      operations: 3,
      ids: 5,
      perProcess: { p0: { ids: 4, firstMs: T + 1, lastMs: T + 8 }, p1: { ids: 1 } },
      wrongWorker: { count: 0 },
      outsideWindow: { count: 0 },
      notIncreasing: { count: 0 },
      sharedMilliseconds: { count: 0 },
    });
  });

  it('reports an ID of another worker ID', () => {
    const result = checkSnowflake([op('p0', T, T + 5, [[T + 1, 3, 0]])], { workerIds });
    expect(result.valid).toBe(false);
    expect(result.wrongWorker).toEqual({
      count: 1,
      examples: [
        expect.objectContaining({ process: 'p0', detail: expect.stringMatching(/worker ID 3/) }),
      ],
    });
  });

  it('reports a millisecond outside the request window beyond the skew', () => {
    const result = checkSnowflake(
      [
        op('p0', T, T + 5, [[T - 30, 0, 0]]),
        op('p0', T + 10, T + 15, [[T + 40, 0, 0]]),
        op('p1', T, T + 5, [[T - 10, 1, 0]]),
      ],
      { workerIds, skewMs: 20 },
    );
    expect(result.outsideWindow.count).toBe(2);
    expect(result.outsideWindow.examples.map((x) => x.process)).toEqual(['p0', 'p0']);
  });

  it('shifts the window by a faked clock offset, accepting both offsets while the change settles', () => {
    const clockOffsets = { p0: [{ fromMs: T + 1000, offsetMs: -5000 }] };
    const ops = [
      op('p0', T, T + 5, [[T + 2, 0, 0]]), // real time before the change
      op('p0', T + 1500, T + 1505, [[T + 1502, 0, 0]]), // the old offset still read
      op('p0', T + 6600, T + 6605, [[T + 1603, 0, 0]]), // the new one
    ];
    expect(checkSnowflake(ops, { workerIds, clockOffsets }).valid).toBe(true);
    // Once the change has settled, real time is no longer accepted.
    const late = op('p0', T + 9000, T + 9005, [[T + 9002, 0, 0]]);
    expect(checkSnowflake([...ops, late], { workerIds, clockOffsets }).outsideWindow.count).toBe(1);
    // Unless every offset since the change stays accepted (libfaketime's glimpses of real time).
    const lenient = { workerIds, clockOffsets, offsetChangeMs: Number.POSITIVE_INFINITY };
    expect(checkSnowflake([...ops, late], lenient).valid).toBe(true);
    const future = op('p0', T + 9000, T + 9005, [[T + 9030, 0, 0]]);
    expect(checkSnowflake([future], lenient).outsideWindow.count).toBe(1);
  });

  it('reports IDs not increasing within an answer or in real-time order per instance', () => {
    const result = checkSnowflake(
      [
        op('p0', T, T + 5, [
          [T + 3, 0, 5],
          [T + 3, 0, 4],
        ]),
        op('p0', T + 10, T + 20, [[T + 15, 0, 0]]),
        // sent after the answer above completed, yet smaller
        op('p0', T + 21, T + 30, [[T + 14, 0, 0]]),
        // concurrent with the first two: any order is fine
        op('p0', T + 2, T + 25, [[T + 4, 0, 0]]),
      ],
      { workerIds, skewMs: 1000 },
    );
    expect(result.notIncreasing.count).toBe(2);
    expect(result.notIncreasing.examples.map((x) => x.detail)).toEqual([
      expect.stringMatching(/within one answer/),
      expect.stringMatching(/completed before this request/),
    ]);
  });

  it('reports a millisecond of one worker ID issued by two instances, even without a duplicate ID', () => {
    const result = checkSnowflake(
      [op('a', T, T + 5, [[T + 2, 0, 10]]), op('b', T, T + 5, [[T + 2, 0, 11]])],
      { workerIds: { a: 0, b: 0 } },
    );
    expect(result.sharedMilliseconds).toEqual({
      count: 1,
      examples: [
        expect.objectContaining({
          process: 'b',
          detail: expect.stringMatching(/also issued by a/),
        }),
      ],
    });
  });
  it('decodes with the layout the instances run with', () => {
    const jsSafe = new SnowflakeLayout(JS_SAFE_EPOCH, JS_SAFE_LAYOUT);
    const ids = [jsSafe.compose(T + 1, 100, 5)];
    const operation: SnowflakeOperation = {
      process: 'p0',
      route: 'snowflake/ids',
      invokeMs: T,
      completeMs: T + 5,
      type: 'ok',
      ids,
    };
    const options = { workerIds: { p0: 100 }, epoch: JS_SAFE_EPOCH };
    expect(checkSnowflake([operation], { ...options, layout: JS_SAFE_LAYOUT }).valid).toBe(true);
    // Read with Leaf's layout, the same ID names another worker and millisecond.
    expect(checkSnowflake([operation], options).valid).toBe(false);
  });
});
