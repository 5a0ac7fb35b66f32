import { FakeClock } from '../../testing/fake-clock';
import {
  dataCentreLayout,
  jsSafeLayout,
  leafLayout,
  openGenerator,
  uuidBits,
} from '../../testing/snowflake-fixtures';
import { InvalidArgumentError } from '../errors/invalid-argument.error';
import { LeafErrorCode } from '../errors/leaf.error';
import type { SnowflakeGenerator } from '../snowflake/snowflake-generator';
import { SnowflakeUuidV7, UUID_V7_PATTERN, isUuidV7 } from './snowflake-uuid-v7';
import { prng } from '../../testing/test-helpers';

const T0 = 1_767_225_600_000; // 2026-01-01T00:00:00Z
const withDataCentre = dataCentreLayout(5);

/** A generator of Leaf's layout at the fake clock's millisecond, sequences starting below 100. */
const generatorOn = (clock: FakeClock, workerId: number) =>
  openGenerator(leafLayout, clock, workerId, 100);

/**
 * `count` IDs of `generator`, the fake clock moved forward one millisecond whenever the
 * generator waits (a used-up millisecond, or twice a step back), and stepped back `stepBack.ms`
 * once after `stepBack.after` IDs. Returns how many milliseconds the first chunk after the step
 * waited.
 */
async function drive(
  generator: SnowflakeGenerator,
  clock: FakeClock,
  count: number,
  onChunk: (ids: bigint[]) => void,
  stepBack?: { after: number; ms: number },
): Promise<{ waitedMs: number }> {
  let issued = 0;
  let waitedMs = 0;
  let stepped = false;
  while (issued < count) {
    let justStepped = false;
    if (stepBack && !stepped && issued >= stepBack.after) {
      clock.advance(-stepBack.ms);
      stepped = justStepped = true;
    }
    let done = false;
    const chunk = generator.take(Math.min(1000, count - issued)).then((ids) => {
      done = true;
      return ids;
    });
    await Promise.resolve();
    while (!done) {
      await new Promise((resolve) => setImmediate(resolve));
      if (!done) {
        clock.advance(1);
        if (justStepped) waitedMs++;
      }
    }
    const ids = await chunk;
    onChunk(ids);
    issued += ids.length;
  }
  return { waitedMs };
}

describe('UUIDv7 from snowflake IDs', () => {
  it('puts time, version, counter, variant and worker where RFC 9562 and the layout say', () => {
    const uuids = new SnowflakeUuidV7(leafLayout, { randomFill: (bytes) => bytes.fill(0) });
    const uuid = uuids.fromId(leafLayout.compose(T0 + 0x123, 0x2a5, 0xabc));
    expect(uuid).toMatch(UUID_V7_PATTERN);
    const bits = uuidBits(uuid);
    expect(Number(bits >> 80n)).toBe(T0 + 0x123); // unix_ts_ms
    expect(Number((bits >> 76n) & 0xfn)).toBe(7); // ver
    expect(Number((bits >> 64n) & 0xfffn)).toBe(0xabc); // rand_a: the sequence
    expect(Number((bits >> 62n) & 3n)).toBe(0b10); // var
    expect(Number((bits >> 52n) & 0x3ffn)).toBe(0x2a5); // rand_b: the worker first
    expect(bits & ((1n << 52n) - 1n)).toBe(0n); // then random (all zero from this source)
    expect(uuid).toBe('019b76da-a923-7abc-aa50-000000000000');
  });

  it('fills the rest of rand_b from the random source, leaving the worker bits alone', () => {
    const uuids = new SnowflakeUuidV7(leafLayout, { randomFill: (bytes) => bytes.fill(0xff) });
    const bits = uuidBits(uuids.fromId(leafLayout.compose(T0, 0, 0)));
    expect(Number((bits >> 52n) & 0x3ffn)).toBe(0);
    expect(bits & ((1n << 52n) - 1n)).toBe((1n << 52n) - 1n);
    expect(Number((bits >> 62n) & 3n)).toBe(0b10);
  });

  it('draws fresh random bytes for every UUID (a pool of 512 at a time)', () => {
    let fills = 0;
    const uuids = new SnowflakeUuidV7(leafLayout, {
      randomFill: (bytes) => {
        fills++;
        // Each UUID's 8 bytes: its slot in the pool and the fill number, in the last group.
        bytes.fill(0);
        for (let slot = 0; slot < bytes.length / 8; slot++) {
          bytes[slot * 8 + 5] = slot >> 8;
          bytes[slot * 8 + 6] = slot & 0xff;
          bytes[slot * 8 + 7] = fills;
        }
      },
    });
    const id = leafLayout.compose(T0, 1, 1);
    const seen = new Set(Array.from({ length: 1024 }, () => uuids.fromId(id)));
    expect(seen.size).toBe(1024);
    expect(fills).toBe(2);
  });

  it.each([
    ['Leaf', leafLayout, 10],
    ['JavaScript-safe', jsSafeLayout, 7],
    ['data-centre', withDataCentre, 10],
  ] as const)(
    '%s layout: every UUID is valid, maps back to its ID, and a worker’s order is kept',
    (_name, layout, nodeBits) => {
      const uuids = new SnowflakeUuidV7(layout);
      const next = prng(nodeBits);
      const first = Math.max(layout.epoch, T0 - 86_400_000);
      let previous = '';
      let timestamp = first;
      let sequence = 0;
      for (let i = 0; i < 100_000; i++) {
        // One worker's IDs, increasing: a new millisecond now and then, the sequence growing.
        if (next() % 4 === 0 || sequence === layout.maxSequence) {
          timestamp += 1 + (next() % 1000);
          sequence = next() % Math.min(100, layout.maxSequence);
        } else {
          sequence++;
        }
        const id = layout.compose(timestamp, 3, sequence);
        const uuid = uuids.fromId(id);
        if (!isUuidV7(uuid) || uuids.toId(uuid) !== id || !(previous < uuid)) {
          throw new Error(`fails at ${id}: ${uuid} after ${previous}`);
        }
        previous = uuid;
      }
      const decoded = uuids.decode(previous);
      expect(decoded).toMatchObject({ timestamp, counter: sequence, workerId: 3 });
      expect(decoded.dataCenterId).toBe(layout === withDataCentre ? 5 : 0);
      expect(decoded.date).toEqual(new Date(timestamp));
    },
  );

  it('never gives two workers the same UUID, even for the same millisecond and sequence', () => {
    const uuids = new SnowflakeUuidV7(leafLayout, { randomFill: (bytes) => bytes.fill(0) });
    const seen = new Set<string>();
    for (let worker = 0; worker <= leafLayout.maxWorkerId; worker++) {
      const uuid = uuids.fromId(leafLayout.compose(T0, worker, 7));
      seen.add(uuid);
      expect(uuids.decode(uuid)).toMatchObject({ workerId: worker, counter: 7, timestamp: T0 });
    }
    expect(seen.size).toBe(1024);
  });

  it('stays strictly increasing through a 2 ms clock step back: the generator waits 4 ms', async () => {
    const clock = new FakeClock(T0);
    const generator = generatorOn(clock, 9);
    const uuids = new SnowflakeUuidV7(leafLayout);
    const all: string[] = [];
    const { waitedMs } = await drive(
      generator,
      clock,
      50_000,
      (ids) => all.push(...ids.map((id) => uuids.fromId(id))),
      { after: 20_000, ms: 2 },
    );
    expect(waitedMs).toBe(4);
    for (let i = 1; i < all.length; i++) {
      if (!(all[i - 1]! < all[i]!)) throw new Error(`not increasing at ${i}`);
    }
    expect(all.every(isUuidV7)).toBe(true);
  });

  it('three workers × 1 M UUIDs, one with a 2 ms clock step back: each strictly increasing, all valid, none shared', async () => {
    const workers = [1, 2, 3].map((workerId) => {
      const clock = new FakeClock(T0);
      return { workerId, clock, generator: generatorOn(clock, workerId) };
    });
    const uuids = new SnowflakeUuidV7(leafLayout);
    const sample = new Set<string>();
    for (const { workerId, clock, generator } of workers) {
      let previous = '';
      let count = 0;
      await drive(
        generator,
        clock,
        1_000_000,
        (ids) => {
          for (const id of ids) {
            const uuid = uuids.fromId(id);
            if (!(previous < uuid) || !UUID_V7_PATTERN.test(uuid)) {
              throw new Error(`worker ${workerId}: ${uuid} after ${previous}`);
            }
            // Every 10th into one set: a literal duplicate check across the three workers.
            if (count++ % 10 === 0) sample.add(uuid);
            previous = uuid;
          }
        },
        workerId === 2 ? { after: 500_000, ms: 2 } : undefined,
      );
      // The worker's bits are in every UUID: another worker's UUIDs differ in them.
      expect(uuids.decode(previous).workerId).toBe(workerId);
    }
    expect(sample.size).toBe(300_000);
  }, 60_000);

  it('reads a UUIDv7 made elsewhere: time and counter, no snowflake ID when it does not fit', () => {
    const uuids = new SnowflakeUuidV7(leafLayout);
    const before = '00000000-0001-7fff-bfff-ffffffffffff'; // 1 ms after 1970, before the epoch
    expect(uuids.decode(before)).toMatchObject({ timestamp: 1, counter: 0xfff, snowflakeId: null });
    expect(() => uuids.toId(before)).toThrow(InvalidArgumentError);
    const small = new SnowflakeUuidV7(jsSafeLayout); // 6 sequence bits: counter 0xfff does not fit
    expect(small.decode(`${before.slice(0, 14)}7fff-8000-000000000000`)).toMatchObject({
      snowflakeId: null,
    });
  });

  it.each([
    ['019B7671-AD23-7ABC-A940-000000000000', 'uppercase'],
    ['019b7671-ad23-4abc-a940-000000000000', 'version 4'],
    ['019b7671-ad23-7abc-c940-000000000000', 'variant 0b11'],
    ['019b7671-ad23-7abc-7940-000000000000', 'variant 0b0'],
    ['{019b7671-ad23-7abc-a940-000000000000}', 'braces'],
    ['urn:uuid:019b7671-ad23-7abc-a940-000000000000', 'a URN'],
    ['019b7671ad237abca940000000000000', 'no hyphens'],
    ['019b7671-ad23-7abc-a940-00000000000', 'one digit short'],
    ['019b7671-ad23-7abc-a940-000000000000\n', 'a newline'],
    ['019b7671-ad23-7abc-a940-00000000000g', 'a non-hex digit'],
  ])('refuses %j (%s)', (text, _why) => {
    expect(isUuidV7(text)).toBe(false);
    expect(() => new SnowflakeUuidV7(leafLayout).decode(text)).toThrow(
      expect.objectContaining({ code: LeafErrorCode.INVALID_ARGUMENT, argument: 'uuid' }),
    );
  });

  it('refuses an ID outside the layout', () => {
    const uuids = new SnowflakeUuidV7(jsSafeLayout);
    for (const id of [-1n, jsSafeLayout.maxId + 1n, 7 as unknown as bigint]) {
      expect(() => uuids.fromId(id)).toThrow(
        expect.objectContaining({ code: LeafErrorCode.INVALID_ARGUMENT, argument: 'id' }),
      );
    }
    expect(isUuidV7(42)).toBe(false);
  });
});
