import fc from 'fast-check';
import { FakeClock } from '../../testing/fake-clock';
import {
  dataCentreLayout,
  jsSafeLayout,
  leafLayout,
  openGenerator,
  uuidBits,
} from '../../testing/snowflake-fixtures';
import { thrownBy } from '../../testing/test-helpers';
import { InvalidArgumentError } from '../errors/invalid-argument.error';
import { LeafErrorCode } from '../errors/leaf.error';
import { ModeDisabledError } from '../errors/mode-disabled.error';
import { TimestampOverflowError } from '../errors/timestamp-overflow.error';
import { TimeBeforeEpochError, TimeBeyondLayoutError } from '../errors/time-outside-layout.error';
import { SnowflakeUuidV7 } from '../formats/snowflake-uuid-v7';
import { IdService, type LeafMode } from '../id.service';
import type { SnowflakeLayout } from './snowflake-layout';
import { snowflakeTimeBounds, timeInterval } from './snowflake-time-bounds';

const T0 = 1_767_225_600_000; // 2026-01-01T00:00:00Z

const within = (id: bigint, { min, max }: { min: bigint; max: bigint }) => min <= id && id <= max;
const uuidWithin = (uuid: string, b: { uuidMin: string; uuidMax: string }) =>
  b.uuidMin <= uuid && uuid <= b.uuidMax;

describe('snowflakeTimeBounds', () => {
  it('holds the IDs and UUIDv7 issued in its millisecond by every worker and data centre, and none of the next or previous', async () => {
    const clock = new FakeClock(T0 - 1);
    const layouts = [leafLayout, dataCentreLayout(0), dataCentreLayout(5), dataCentreLayout(7)];
    const generators = layouts.flatMap((layout) =>
      [0, 1, layout.maxWorkerId].map((worker) => ({
        layout,
        generator: openGenerator(layout, clock, worker, 64),
        uuids: new SnowflakeUuidV7(layout),
      })),
    );
    const issued: Array<{ at: number; id: bigint; uuid: string }> = [];
    for (const at of [T0 - 1, T0, T0 + 1]) {
      clock.set(at);
      for (const { generator, uuids } of generators) {
        for (const id of await generator.take(50)) issued.push({ at, id, uuid: uuids.fromId(id) });
      }
    }
    const bounds = snowflakeTimeBounds(leafLayout, T0);
    expect(bounds).toMatchObject({ from: T0, to: T0 });
    for (const { at, id, uuid } of issued) {
      // The bounds agree with what decode reads from each ID.
      expect(leafLayout.decode(id).timestamp).toBe(at);
      expect(within(id, bounds)).toBe(at === T0);
      expect(uuidWithin(uuid, bounds)).toBe(at === T0);
      expect(
        within(uuidBits(uuid), { min: uuidBits(bounds.uuidMin), max: uuidBits(bounds.uuidMax) }),
      ).toBe(at === T0);
    }
    // The IDs of T0 reach the bounds themselves: worker 0 of data centre 0, and the last worker
    // of data centre 7 (sequence used up below).
    expect(leafLayout.decode(bounds.min)).toMatchObject({
      timestamp: T0,
      workerId: 0,
      sequence: 0,
    });
    expect(dataCentreLayout(7).decode(bounds.max)).toMatchObject({
      timestamp: T0,
      dataCenterId: 7,
      workerId: 127,
      sequence: 4095,
    });
    const last = dataCentreLayout(7);
    clock.set(T0);
    const full = await openGenerator(last, clock, last.maxWorkerId).take(4096);
    expect(full.at(-1)).toBe(bounds.max);
    expect(full.every((id) => within(id, bounds))).toBe(true);
  });

  it('an interval: the first ID of from to the last of to; adjacent milliseconds leave no gap', () => {
    const a = snowflakeTimeBounds(leafLayout, T0);
    const b = snowflakeTimeBounds(leafLayout, T0 + 1);
    const span = snowflakeTimeBounds(leafLayout, T0, new Date(T0 + 1));
    expect(span).toEqual({ ...a, to: T0 + 1, max: b.max, uuidMax: b.uuidMax });
    expect(b.min).toBe(a.max + 1n);
    expect(a.max - a.min).toBe(2n ** 22n - 1n);
    // T0 in hex is 019b76daa800.
    expect(a.uuidMin).toBe('019b76da-a800-7000-8000-000000000000');
    expect(a.uuidMax).toBe('019b76da-a800-7fff-bfff-ffffffffffff');
    expect(snowflakeTimeBounds(leafLayout, new Date(T0))).toEqual(a);
  });

  it('at the epoch: the first ID issued is 0, the lower bound', async () => {
    for (const layout of [leafLayout, jsSafeLayout]) {
      const clock = new FakeClock(layout.epoch);
      const [first] = await openGenerator(layout, clock, 0).take(1);
      const bounds = snowflakeTimeBounds(layout, layout.epoch);
      expect(bounds.min).toBe(0n);
      expect(first! - (first! & BigInt(layout.maxSequence))).toBe(0n);
      expect(within(first!, bounds)).toBe(true);
      expect(layout.decode(bounds.max).timestamp).toBe(layout.epoch);
      const before = thrownBy(() => snowflakeTimeBounds(layout, layout.epoch - 1, layout.epoch));
      expect(before).toBeInstanceOf(TimeBeforeEpochError);
      expect(before).toMatchObject({
        code: LeafErrorCode.TIME_BEFORE_EPOCH,
        timestamp: layout.epoch - 1,
        epoch: layout.epoch,
      });
    }
  });

  it("at the layout's last millisecond: the largest ID is the upper bound; a millisecond more is refused, as the generator refuses it", async () => {
    for (const layout of [leafLayout, jsSafeLayout]) {
      const clock = new FakeClock(layout.maxTimestamp);
      const generator = openGenerator(layout, clock, layout.maxWorkerId);
      const ids = await generator.take(layout.maxSequence + 1);
      const bounds = snowflakeTimeBounds(layout, layout.maxTimestamp);
      expect(ids.at(-1)).toBe(layout.maxId);
      expect(bounds.max).toBe(layout.maxId);
      expect(ids.every((id) => within(id, bounds))).toBe(true);
      clock.advance(1);
      await expect(generator.next()).rejects.toBeInstanceOf(TimestampOverflowError);
      const beyond = thrownBy(() => snowflakeTimeBounds(layout, T0, layout.maxTimestamp + 1));
      expect(beyond).toBeInstanceOf(TimeBeyondLayoutError);
      expect(beyond).toMatchObject({
        code: LeafErrorCode.TIME_BEYOND_LAYOUT,
        timestamp: layout.maxTimestamp + 1,
        maxTimestamp: layout.maxTimestamp,
      });
    }
  });

  it('refuses a reversed interval and ends that are not integers or valid Dates', () => {
    const reversed = thrownBy(() => snowflakeTimeBounds(leafLayout, T0 + 1, T0));
    expect(reversed).toBeInstanceOf(InvalidArgumentError);
    expect(reversed).toMatchObject({ code: LeafErrorCode.INVALID_ARGUMENT, argument: 'to' });
    const bad: unknown[] = [1.5, NaN, Infinity, 2 ** 53, '1767225600000', 1767225600000n, null];
    for (const value of [...bad, new Date('not a date')]) {
      expect(thrownBy(() => snowflakeTimeBounds(leafLayout, value as number))).toMatchObject({
        code: LeafErrorCode.INVALID_ARGUMENT,
        argument: 'from',
      });
      expect(thrownBy(() => timeInterval(T0, value as number))).toMatchObject({ argument: 'to' });
    }
  });

  it('property: an ID or UUIDv7 is within the bounds of [from, to] exactly when its timestamp is', () => {
    const layouts = [leafLayout, jsSafeLayout, dataCentreLayout(0), dataCentreLayout(6)];
    const uuids = layouts.map((layout) => new SnowflakeUuidV7(layout));
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: layouts.length - 1 }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.integer({ min: 0, max: 3 }),
        fc.integer({ min: -3, max: 8 }),
        fc.nat(),
        fc.nat(),
        (which, at, length, offset, worker, sequence) => {
          const layout = layouts[which]!;
          const span = layout.maxTimestamp - layout.epoch - length;
          const from = layout.epoch + Math.floor(at * span);
          const to = from + length;
          const bounds = snowflakeTimeBounds(layout, from, to);
          const t = Math.min(layout.maxTimestamp, Math.max(layout.epoch, from + offset));
          const id = layout.compose(
            t,
            worker % (layout.maxWorkerId + 1),
            sequence % (layout.maxSequence + 1),
          );
          const inside = t >= from && t <= to;
          expect(within(id, bounds)).toBe(inside);
          expect(uuidWithin(uuids[which]!.fromId(id), bounds)).toBe(inside);
        },
      ),
      { numRuns: 5000 },
    );
  });
});

/** An `IdService` whose snowflake layout is `layout` (none: `null`). */
class LayoutOnly extends IdService {
  constructor(private readonly layout: SnowflakeLayout | null) {
    super();
  }
  get(): Promise<bigint> {
    throw new Error('not used');
  }
  getIds(): Promise<bigint[]> {
    throw new Error('not used');
  }
  protected override layoutOf(mode: LeafMode): SnowflakeLayout | null {
    return mode === 'snowflake' ? this.layout : null;
  }
}

describe('IdService.snowflakeBounds', () => {
  it("answers with the service's layout; checks the ends first; without a layout, ModeDisabledError", async () => {
    await expect(new LayoutOnly(jsSafeLayout).snowflakeBounds(T0, T0 + 5)).resolves.toEqual(
      snowflakeTimeBounds(jsSafeLayout, T0, T0 + 5),
    );
    await expect(new LayoutOnly(null).snowflakeBounds(T0)).rejects.toBeInstanceOf(
      ModeDisabledError,
    );
    await expect(new LayoutOnly(null).snowflakeBounds(T0, T0 - 1)).rejects.toBeInstanceOf(
      InvalidArgumentError,
    );
  });
});
