import { InvalidArgumentError } from '../errors/invalid-argument.error';
import {
  JS_SAFE_EPOCH,
  JS_SAFE_LAYOUT,
  LEAF_LAYOUT,
  layoutProblems,
  SNOWFLAKE_MAX_ID,
  SNOWFLAKE_MAX_TIMESTAMP_DELTA,
  SnowflakeLayout,
} from './snowflake-layout';
import { DEFAULT_SNOWFLAKE_EPOCH } from './snowflake-layout';

describe('SnowflakeLayout', () => {
  const layout = new SnowflakeLayout(DEFAULT_SNOWFLAKE_EPOCH);

  it("composes Leaf's layout: 41 bits of ms since the epoch, 10 bits worker, 12 bits sequence", () => {
    const id = layout.compose(DEFAULT_SNOWFLAKE_EPOCH + 1, 1, 1);
    expect(id).toBe((1n << 22n) | (1n << 12n) | 1n);
    expect(layout.compose(DEFAULT_SNOWFLAKE_EPOCH, 0, 0)).toBe(0n);
    expect(layout.compose(layout.maxTimestamp, 1023, 4095)).toBe(SNOWFLAKE_MAX_ID);
  });

  it('decodes what it composes (bigint and decimal string)', () => {
    const timestamp = 1_700_000_000_123;
    const id = layout.compose(timestamp, 517, 4000);
    for (const input of [id, id.toString()]) {
      const decoded = layout.decode(input);
      expect(decoded).toEqual({
        id,
        timestamp,
        date: new Date(timestamp),
        dataCenterId: 0,
        workerId: 517,
        sequence: 4000,
      });
    }
  });

  it('matches an ID issued by the Java Leaf', () => {
    // 1288834974657 + 305419896 ms, worker 5, sequence 77, computed by hand.
    const id = (305_419_896n << 22n) | (5n << 12n) | 77n;
    expect(layout.decode(id.toString())).toMatchObject({
      timestamp: 1_288_834_974_657 + 305_419_896,
      workerId: 5,
      sequence: 77,
    });
  });

  it('uses the configured epoch', () => {
    const custom = new SnowflakeLayout(1_600_000_000_000);
    const id = custom.compose(1_600_000_000_010, 3, 9);
    expect(id >> 22n).toBe(10n);
    expect(custom.decode(id).timestamp).toBe(1_600_000_000_010);
    expect(layout.decode(id).timestamp).toBe(DEFAULT_SNOWFLAKE_EPOCH + 10);
  });

  it('knows the last millisecond that fits 41 bits', () => {
    expect(layout.maxTimestamp).toBe(DEFAULT_SNOWFLAKE_EPOCH + SNOWFLAKE_MAX_TIMESTAMP_DELTA);
    expect(layout.fits(layout.maxTimestamp)).toBe(true);
    expect(layout.fits(layout.maxTimestamp + 1)).toBe(false);
    expect(layout.fits(DEFAULT_SNOWFLAKE_EPOCH - 1)).toBe(false);
  });

  it.each([
    ['a negative ID', -1n],
    ['an ID above 2^63-1', SNOWFLAKE_MAX_ID + 1n],
    ['a negative string', '-5'],
    ['a non-decimal string', '12a'],
    ['an empty string', ''],
    ['a 20-digit string', '12345678901234567890'],
    ['hex', '0x10'],
  ])('rejects %s', (_label, input) => {
    expect(() => layout.decode(input)).toThrow(InvalidArgumentError);
  });

  it('rejects non-bigint, non-string input', () => {
    expect(() => layout.decode(5 as unknown as bigint)).toThrow(InvalidArgumentError);
  });

  it('rejects fields out of range when composing', () => {
    expect(() => layout.compose(DEFAULT_SNOWFLAKE_EPOCH - 1, 0, 0)).toThrow(InvalidArgumentError);
    expect(() => layout.compose(layout.maxTimestamp + 1, 0, 0)).toThrow(InvalidArgumentError);
    expect(() => layout.compose(DEFAULT_SNOWFLAKE_EPOCH, 1024, 0)).toThrow(InvalidArgumentError);
    expect(() => layout.compose(DEFAULT_SNOWFLAKE_EPOCH, 0, 4096)).toThrow(InvalidArgumentError);
  });

  describe('other bit splits', () => {
    it('the JavaScript-safe layout never passes 2^53 - 1 and says how long it lasts', () => {
      const js = new SnowflakeLayout(JS_SAFE_EPOCH, JS_SAFE_LAYOUT);
      expect(js.maxId).toBe(BigInt(Number.MAX_SAFE_INTEGER));
      expect(js.compose(js.maxTimestamp, js.maxWorkerId, js.maxSequence)).toBe(js.maxId);
      expect(js.maxWorkerId).toBe(127);
      expect(js.maxSequence).toBe(63);
      expect(new Date(js.maxTimestamp).toISOString()).toMatch(/^2059-11/);
      expect(js.describe()).toMatch(
        /40 bits ms \+ 7 bits worker \+ 6 bits sequence: 64 IDs per ms per worker \(64,000\/s\), 128 worker IDs, IDs up to 9007199254740991 \(JavaScript-safe\).*until 2059-11.*34\.8 years/,
      );
      const id = js.compose(1_800_000_000_000, 100, 7);
      expect(js.decode(id)).toMatchObject({
        timestamp: 1_800_000_000_000,
        workerId: 100,
        sequence: 7,
      });
      expect(() => js.decode((js.maxId + 1n).toString())).toThrow(InvalidArgumentError);
    });

    it('splits the worker field into data-centre and worker bits', () => {
      const dc = new SnowflakeLayout(
        DEFAULT_SNOWFLAKE_EPOCH,
        { timestampBits: 41, dataCenterBits: 3, workerBits: 7, sequenceBits: 12 },
        5,
      );
      const id = dc.compose(DEFAULT_SNOWFLAKE_EPOCH + 1, 9, 1);
      // The same bits as Leaf's layout with worker ID 5 * 128 + 9.
      expect(id).toBe(layout.compose(DEFAULT_SNOWFLAKE_EPOCH + 1, 5 * 128 + 9, 1));
      expect(dc.decode(id)).toMatchObject({ dataCenterId: 5, workerId: 9, sequence: 1 });
      expect(() => dc.compose(DEFAULT_SNOWFLAKE_EPOCH, 128, 0)).toThrow(/0\.\.127/);
      expect(dc.describe()).toMatch(
        /3 bits data centre \(5\).*128 worker IDs in each of 8 data centres/,
      );
    });

    it('refuses splits that do not add up', () => {
      expect(
        layoutProblems({ timestampBits: 42, dataCenterBits: 0, workerBits: 10, sequenceBits: 12 }),
      ).toEqual(["the layout's bits add up to 64; at most 63 fit a signed 64-bit ID"]);
      expect(
        layoutProblems({ timestampBits: 41, dataCenterBits: 4, workerBits: 7, sequenceBits: 11 }),
      ).toEqual(['data-centre and worker bits add up to 11; the worker field has at most 10']);
      expect(layoutProblems(LEAF_LAYOUT, 1)).toEqual([
        'dataCenterId must be an integer in 0..0 (got 1)',
      ]);
      expect(() => new SnowflakeLayout(0, { ...LEAF_LAYOUT, sequenceBits: 0 })).toThrow(
        InvalidArgumentError,
      );
    });
  });
});
