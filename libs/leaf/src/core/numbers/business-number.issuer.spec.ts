import { FakeClock } from '../../testing/fake-clock';
import { InMemoryAllocStore } from '../../testing/in-memory-alloc.store';
import { InMemoryNumberFormatStore } from '../../testing/in-memory-number-format.store';
import { AllocationError } from '../errors/allocation.error';
import { InvalidArgumentError } from '../errors/invalid-argument.error';
import { NumberFormatNotFoundError, NumberOverflowError } from '../errors/number-format.error';
import { TagNotFoundError } from '../errors/tag-not-found.error';
import { BusinessNumberIssuer, type NumberCounters } from './business-number.issuer';
import { checkNewNumberFormat, type NewNumberFormat } from './number-format';

const ORDERS: NewNumberFormat = {
  tag: 'orders',
  prefix: 'ORD',
  datePattern: 'yyyyMMdd',
  timeZone: 'Asia/Shanghai',
  width: 6,
};
const MARGIN = 50;

/** Local monotonic time, the host's wall clock and the database's clock, moved together. */
class World {
  monotonic = 0;
  database: number;
  readonly host = new FakeClock(Date.parse('2020-01-01T00:00:00Z'));
  constructor(databaseIso: string) {
    this.database = Date.parse(databaseIso);
  }
  advance(ms: number): void {
    this.monotonic += ms;
    this.database += ms;
    this.host.advance(ms);
  }
}

const settle = async () => {
  for (let i = 0; i < 20; i++) await new Promise((resolve) => setImmediate(resolve));
};

async function setup(
  format: NewNumberFormat,
  databaseIso: string,
  step = 1000,
  options: { sync?: boolean } = {},
) {
  const world = new World(databaseIso);
  const rows = new InMemoryAllocStore().setTag(format.tag, step);
  const formats = new InMemoryNumberFormatStore().followClock(() => world.database);
  await formats.createFormat(checkNewNumberFormat(format));
  let gate: Promise<void> | null = null;
  let open = () => {};
  // Counters straight from the row, one at a time: every counter is the row's next value.
  const counters: NumberCounters = {
    get: async (tag) => {
      const held = gate;
      const range = await rows.allocate(tag, 1);
      if (held) await held;
      return range.maxId - 1n;
    },
    getIds: async (tag, count) => {
      const range = await rows.allocate(tag, count);
      return Array.from({ length: count }, (_, i) => range.maxId - BigInt(count - i));
    },
  };
  if (options.sync) {
    // What segment mode's generator does: counters from memory, here from 1001 on, after a
    // first call that finds nothing in memory yet.
    counters.generator = () => {
      let last: bigint | undefined;
      return {
        next: () => {
          if (last === undefined) {
            last = 0n;
            throw new Error('not in memory');
          }
          last++;
          return 1000n + last;
        },
      };
    };
  }
  const ready: string[] = [];
  const make = () =>
    new BusinessNumberIssuer({
      formats,
      rows,
      counters: () => counters,
      counterReady: (tag) => ready.push(tag),
      clock: world.host,
      monotonic: () => world.monotonic,
      options: {
        clockMaxAgeMs: 60_000,
        clockMarginMs: MARGIN,
        formatTtlMs: 60_000,
        missingFormatTtlMs: 5000,
      },
    });
  return {
    world,
    rows,
    formats,
    ready,
    issuer: make(),
    make,
    hold: () => {
      gate = new Promise((resolve) => (open = resolve));
    },
    release: () => {
      gate = null;
      open();
    },
  };
}

describe('BusinessNumberIssuer', () => {
  it("serves PREFIX-date-000001 upward on the database's date, whatever the host's clock says", async () => {
    const { issuer, formats, ready } = await setup(ORDERS, '2026-12-04T10:00:00Z');
    expect(await issuer.next('orders')).toBe('ORD-20261204-000001');
    expect(await issuer.next('orders')).toBe('ORD-20261204-000002');
    expect(await issuer.nextBatch('orders', 3)).toEqual([
      'ORD-20261204-000003',
      'ORD-20261204-000004',
      'ORD-20261204-000005',
    ]);
    expect(formats.clockReads).toBe(1);
    expect(ready).toEqual(['orders:20261204']);
  });

  it("takes the format's time zone: 16:30 UTC is the next day in Shanghai", async () => {
    const { issuer } = await setup(ORDERS, '2026-12-04T16:30:00Z');
    expect(await issuer.next('orders')).toBe('ORD-20261205-000001');
  });

  it('creates one counter row per period, with max_id 1 and the base step', async () => {
    const { issuer, rows } = await setup(ORDERS, '2026-12-04T10:00:00Z', 500);
    await Promise.all(Array.from({ length: 50 }, () => issuer.next('orders')));
    const row = await rows.findTag('orders:20261204');
    expect(row).toMatchObject({ step: 500, maxId: 51n });
    expect((await rows.findTag('orders'))!.maxId).toBe(1n);
  });

  it('restarts the counter at the boundary, once, and a restarted instance continues it', async () => {
    // 23:59:59.000 in Shanghai.
    const { world, issuer, make, formats } = await setup(ORDERS, '2026-12-04T15:59:59Z');
    expect(await issuer.next('orders')).toBe('ORD-20261204-000001');
    expect(await issuer.next('orders')).toBe('ORD-20261204-000002');
    world.advance(2000);
    expect(await issuer.next('orders')).toBe('ORD-20261205-000001');
    expect(await issuer.next('orders')).toBe('ORD-20261205-000002');
    const restarted = make();
    expect(await restarted.next('orders')).toBe('ORD-20261205-000003');
    expect(formats.clockReads).toBe(3);
  });

  it('waits while the database may be on either side of midnight, then serves the new day', async () => {
    const { world, issuer } = await setup(ORDERS, '2026-12-04T15:59:59.980Z');
    const call = issuer.next('orders');
    await settle();
    expect(world.host.pendingSleeps).toBe(1);
    world.advance(MARGIN + 20);
    expect(await call).toBe('ORD-20261205-000001');
  });

  it('drops a counter that came back after its period could have ended, and serves the next period', async () => {
    const { world, issuer, rows, hold, release } = await setup(ORDERS, '2026-12-04T15:59:59Z');
    expect(await issuer.next('orders')).toBe('ORD-20261204-000001');
    hold();
    const late = issuer.next('orders');
    await settle();
    world.advance(1000);
    release();
    await settle();
    world.advance(MARGIN);
    expect(await late).toBe('ORD-20261205-000001');
    // Counter 2 of the 4th was taken and never printed: a gap at the end of the day.
    expect((await rows.findTag('orders:20261204'))!.maxId).toBe(3n);
  });

  it('reads the clock again once a reading is maxAgeMs old', async () => {
    const { world, issuer, formats } = await setup(ORDERS, '2026-12-04T10:00:00Z');
    await issuer.next('orders');
    world.advance(59_999);
    await issuer.next('orders');
    expect(formats.clockReads).toBe(1);
    world.advance(1);
    expect(await issuer.next('orders')).toBe('ORD-20261204-000003');
    expect(formats.clockReads).toBe(2);
  });

  it('runs a monthly counter across the days of its month', async () => {
    const { world, issuer } = await setup(
      { ...ORDERS, prefix: 'INV', separator: '', reset: 'month' },
      '2026-12-04T15:59:59Z',
    );
    expect(await issuer.next('orders')).toBe('INV20261204000001');
    world.advance(2000);
    expect(await issuer.next('orders')).toBe('INV20261205000002');
  });

  it('without a date counts on the base row and never reads the clock', async () => {
    const { issuer, formats } = await setup(
      { tag: 'pr', prefix: 'PR', separator: '', width: 6 },
      '2026-12-04T10:00:00Z',
    );
    expect(await issuer.next('pr')).toBe('PR000001');
    expect(await issuer.nextBatch('pr', 2)).toEqual(['PR000002', 'PR000003']);
    expect(formats.clockReads).toBe(0);
  });

  it('refuses a counter wider than the width, for the rest of the period', async () => {
    const { world, issuer } = await setup({ ...ORDERS, width: 2 }, '2026-12-04T15:59:00Z');
    const numbers = await issuer.nextBatch('orders', 99);
    expect(numbers.at(-1)).toBe('ORD-20261204-99');
    await expect(issuer.next('orders')).rejects.toBeInstanceOf(NumberOverflowError);
    await expect(issuer.nextBatch('orders', 2)).rejects.toMatchObject({
      code: 'LEAF_NUMBER_OVERFLOW',
    });
    world.advance(61_000);
    expect(await issuer.next('orders')).toBe('ORD-20261205-01');
  });

  it('answers typed errors: unknown format (remembered briefly), another mode, no base row, no clock', async () => {
    const { issuer, formats, rows } = await setup(ORDERS, '2026-12-04T10:00:00Z');
    const find = jest.spyOn(formats, 'findFormat');
    await expect(issuer.next('nope')).rejects.toBeInstanceOf(NumberFormatNotFoundError);
    await expect(issuer.next('nope')).rejects.toMatchObject({
      code: 'LEAF_NUMBER_FORMAT_NOT_FOUND',
    });
    expect(find).toHaveBeenCalledTimes(1);
    await expect(issuer.next('orders', 'sequence')).rejects.toBeInstanceOf(InvalidArgumentError);
    formats.failClock(1);
    await expect(issuer.next('orders')).rejects.toBeInstanceOf(AllocationError);
    rows.deleteTag('orders');
    await expect(issuer.next('orders')).rejects.toBeInstanceOf(TagNotFoundError);
  });

  it('decodes its numbers, and refuses dates that do not exist', async () => {
    const { issuer } = await setup(ORDERS, '2026-12-04T10:00:00Z');
    const number = await issuer.next('orders');
    expect(await issuer.decode('orders', number)).toEqual({
      tag: 'orders',
      mode: 'segment',
      period: '20261204',
      counterTag: 'orders:20261204',
      counter: 1n,
    });
    await expect(issuer.decode('orders', 'ORD-20261304-000001')).rejects.toBeInstanceOf(
      InvalidArgumentError,
    );
  });

  it('takes counters from memory without waiting, and drops one taken past its deadline', async () => {
    const { world, issuer } = await setup(ORDERS, '2026-12-04T15:59:59Z', 1000, { sync: true });
    // The first calls wait (the period unknown, then nothing in memory), the next come from
    // memory.
    expect(await issuer.next('orders')).toBe('ORD-20261204-000001');
    expect(await issuer.next('orders')).toBe('ORD-20261204-000002');
    expect(await issuer.next('orders')).toBe('ORD-20261204-001001');
    expect(await issuer.next('orders')).toBe('ORD-20261204-001002');
    world.advance(1000);
    const next = issuer.next('orders');
    await settle();
    world.advance(MARGIN);
    // 1003 was taken past the deadline and dropped; the new day's row starts at 1.
    expect(await next).toBe('ORD-20261205-000001');
  });

  it('takes a wider format at once when told', async () => {
    const { issuer, formats } = await setup(ORDERS, '2026-12-04T10:00:00Z');
    await issuer.next('orders');
    const wider = await formats.updateFormat('orders', 8, null);
    issuer.formats.changed(wider);
    expect(await issuer.next('orders')).toBe('ORD-20261204-00000002');
  });
});
