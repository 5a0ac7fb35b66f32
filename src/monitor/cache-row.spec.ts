import { CACHE_COLUMNS, leafCacheRow } from './monitor.controller';

const segment = (value: string, max: string, step: number) => ({
  value,
  max,
  step,
  idle: String(BigInt(max) - BigInt(value)),
});

const base = {
  tag: 'order',
  initialized: true,
  loading: false,
  step: 10,
  baseStep: 10,
  loads: 1,
  lastLoadAt: 0,
  lastError: null,
  current: segment('3', '11', 10),
  next: null,
  pos: 0,
  previous: null,
  highWater: null as string | null,
};

describe('/cache rows in Leaf column order', () => {
  it("starts with Leaf's columns, then ours", () => {
    expect(CACHE_COLUMNS.slice(0, 10)).toEqual(
      'name init next pos value0 max0 step0 value1 max1 step1'.split(' '),
    );
  });

  it('first segment in slot 0, empty slot 1', () => {
    const row = leafCacheRow(base as never, 'off');
    expect(row.slice(0, 10)).toEqual(['order', true, false, 0, '3', '11', 10, '0', '0', 0]);
  });

  it('next segment loaded into the other slot', () => {
    const row = leafCacheRow({ ...base, next: segment('11', '21', 10) } as never, 'off');
    expect(row.slice(0, 10)).toEqual(['order', true, true, 0, '3', '11', 10, '11', '21', 10]);
  });

  it('after a switch: current in slot 1, the used-up segment still in slot 0', () => {
    const row = leafCacheRow(
      {
        ...base,
        pos: 1,
        current: segment('12', '21', 10),
        previous: segment('11', '11', 10),
      } as never,
      'off',
    );
    expect(row.slice(0, 10)).toEqual(['order', true, false, 1, '11', '11', 10, '12', '21', 10]);
  });

  it('an uninitialized buffer shows empty slots', () => {
    const row = leafCacheRow(
      { ...base, initialized: false, current: null, loads: 0 } as never,
      'off',
    );
    expect(row.slice(0, 10)).toEqual(['order', false, false, 0, '0', '0', 0, '0', '0', 0]);
  });

  it('the last column is the high-water mark: off, or the value last read or written', () => {
    expect(leafCacheRow(base as never, 'off').at(-1)).toBe('off');
    expect(leafCacheRow({ ...base, highWater: '2001' } as never, 'on').at(-1)).toBe('2001');
    expect(leafCacheRow(base as never, 'on').at(-1)).toBe('');
    expect(CACHE_COLUMNS.at(-1)).toBe('high-water mark');
  });
});
