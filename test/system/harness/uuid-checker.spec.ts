import { randomUUID } from 'node:crypto';
import { DEFAULT_SNOWFLAKE_EPOCH, SnowflakeLayout } from 'nestjs-leaf';
import { isUuidV7, SnowflakeUuidV7 } from 'nestjs-leaf/formats';
import {
  checkUuidV7,
  uuidV7Millisecond,
  uuidV7Node,
  uuidV7Problem,
  type UuidAnswer,
} from './uuid-checker';

const layout = new SnowflakeLayout(DEFAULT_SNOWFLAKE_EPOCH);
const T = 1_800_000_000_000;

/** The UUIDv7 of the snowflake ID (`ms`, `worker`, `sequence`). */
function uuid(ms: number, worker: number, sequence: number): string {
  return new SnowflakeUuidV7(layout).fromId(layout.compose(ms, worker, sequence));
}

function answer(invokeMs: number, completeMs: number, uuids: string[]): UuidAnswer {
  return { invokeMs, completeMs, uuids };
}

describe('uuidV7Problem', () => {
  const good = uuid(T, 5, 7);

  it('accepts the canonical text of a UUIDv7', () => {
    expect(uuidV7Problem(good)).toBeNull();
    expect(uuidV7Problem('01a23699-66ed-7033-8009-4f2bf435e5e8')).toBeNull();
  });

  it.each([
    ['uppercase', good.toUpperCase(), /lowercase hex digit/],
    ['braces', `{${good}}`, /38 characters/],
    ['a URN', `urn:uuid:${good}`, /45 characters/],
    ['no dashes', good.replace(/-/g, ''), /32 characters/],
    ['a dash moved', `${good.slice(0, 8)}${good.slice(9, 10)}-${good.slice(10)}`, /no dash at 8/],
    ['version 4 (crypto.randomUUID)', randomUUID(), /version 4, not 7/],
    ['version 8', `${good.slice(0, 14)}8${good.slice(15)}`, /version 8, not 7/],
    ['variant 0b11', `${good.slice(0, 19)}c${good.slice(20)}`, /variant bits 11, not 10/],
    ['variant 0b01', `${good.slice(0, 19)}4${good.slice(20)}`, /variant bits 01, not 10/],
    ['the nil UUID', '00000000-0000-0000-0000-000000000000', /version 0/],
    ['the max UUID', 'ffffffff-ffff-ffff-ffff-ffffffffffff', /not a lowercase|version 15/],
    ['a number', 42, /not a string/],
  ])('refuses %s', (_what, text, problem) => {
    expect(uuidV7Problem(text)).toMatch(problem);
    // The library's validator agrees.
    expect(isUuidV7(text)).toBe(false);
  });

  it('reads unix_ts_ms and the worker bits as the library lays them out', () => {
    expect(uuidV7Millisecond(good)).toBe(T);
    expect(uuidV7Node(good, 10)).toBe(5);
    expect(uuidV7Node(uuid(T, 1023, 0), 10)).toBe(1023);
  });
});

describe('checkUuidV7', () => {
  const workerIds = { p0: 0, p1: 1 };

  it('accepts valid, distinct UUIDs of the right worker, increasing per process, inside their windows', () => {
    const result = checkUuidV7(
      {
        p0: [
          answer(T, T + 3, [uuid(T, 0, 1), uuid(T, 0, 2)]),
          answer(T + 4, T + 6, [uuid(T + 5, 0, 0)]),
        ],
        p1: [answer(T, T + 3, [uuid(T, 1, 1)])],
      },
      { workerIds },
    );
    expect(result).toMatchObject({
      valid: true,
      uuids: 4,
      distinct: 4,
      perProcess: { p0: { uuids: 3, answers: 2, firstMs: T, lastMs: T + 5 }, p1: { uuids: 1 } },
      invalid: { count: 0 },
      duplicates: { count: 0 },
      notIncreasing: { count: 0 },
      wrongWorker: { count: 0 },
      outsideWindow: { count: 0 },
    });
  });

  it('reports a text that is not a UUIDv7, and checks nothing more of it', () => {
    const result = checkUuidV7({ p0: [answer(T, T + 1, [randomUUID()])] }, { workerIds });
    expect(result.valid).toBe(false);
    expect(result.invalid).toEqual({
      count: 1,
      examples: [expect.objectContaining({ process: 'p0', detail: 'version 4, not 7' })],
    });
    expect(result.notIncreasing.count + result.wrongWorker.count).toBe(0);
  });

  it('reports a UUID served twice, within a process or by two', () => {
    const twice = uuid(T, 0, 9);
    const result = checkUuidV7(
      {
        p0: [answer(T, T + 1, [twice])],
        p1: [answer(T, T + 1, [twice])],
      },
      { workerIds: { p0: 0, p1: 0 } },
    );
    expect(result.duplicates).toEqual({
      count: 1,
      examples: [{ process: 'p1', uuid: twice, detail: 'also served by p0' }],
    });
    expect(result.distinct).toBe(1);
  });

  it('reports a UUID not above the one served before it, within an answer and across answers', () => {
    // The same text twice (the random bits differ between two UUIDs of one snowflake ID).
    const four = uuid(T, 0, 4);
    const result = checkUuidV7(
      {
        p0: [
          answer(T, T + 3, [uuid(T, 0, 5), four]),
          answer(T + 4, T + 6, [four]),
          answer(T + 7, T + 9, [uuid(T + 8, 0, 0)]),
        ],
      },
      { workerIds },
    );
    expect(result.notIncreasing.count).toBe(2);
    // ...and the second of the equal pair is a repeat as well.
    expect(result.duplicates.count).toBe(1);
  });

  it('reports a UUID carrying another worker ID', () => {
    const result = checkUuidV7({ p1: [answer(T, T + 1, [uuid(T, 3, 0)])] }, { workerIds });
    expect(result.wrongWorker.examples[0]).toMatchObject({
      process: 'p1',
      detail: 'worker ID 3, the instance holds 1',
    });
  });

  it('reports unix_ts_ms outside the request window, widened by a stepped clock', () => {
    const early = answer(T, T + 1, [uuid(T - 27, 0, 0)]);
    expect(checkUuidV7({ p0: [early] }, { workerIds }).outsideWindow.count).toBe(1);
    const slack = { workerIds, clockSlackMs: { p0: 2 } };
    expect(checkUuidV7({ p0: [early] }, slack).outsideWindow.count).toBe(0);
    const late = answer(T, T + 1, [uuid(T + 40, 0, 0)]);
    expect(checkUuidV7({ p0: [late] }, slack).outsideWindow.count).toBe(1);
  });
});
