import { systemClock } from '../clock';
import { ClockMovedBackwardsError } from '../errors/clock-moved-backwards.error';
import { LeafErrorCode } from '../errors/leaf.error';
import { TimeLeaseUnavailableError } from '../errors/time-lease-unavailable.error';
import { TimestampOverflowError } from '../errors/timestamp-overflow.error';
import { FakeClock } from '../../testing/fake-clock';
import {
  SnowflakeGenerator,
  type SnowflakeGeneratorOptions,
  type SnowflakeLeaseGate,
} from './snowflake-generator';
import { SNOWFLAKE_SEQUENCE_BITS, SnowflakeLayout } from './snowflake-layout';

const EPOCH = 1_288_834_974_657;
const T0 = 1_700_000_000_000;

/** A fake clock that counts how often it is read, to prove waits do not spin. */
class CountingClock extends FakeClock {
  reads = 0;
  override now(): number {
    this.reads++;
    return super.now();
  }
}

/** A lease that grants `grant` ms beyond every covered timestamp, or fails with `failure`. */
class StubLease implements SnowflakeLeaseGate {
  covers = 0;
  renewals = 0;
  failure: Error | null = null;
  private readonly stopListeners: Array<() => void> = [];
  constructor(
    public issuableUntil: number,
    private readonly grant = 10_000,
  ) {}
  maybeRenew(): void {
    this.renewals++;
  }
  onStop(listener: () => void): void {
    this.stopListeners.push(listener);
  }
  /** Stops for good, as a revoked lease. */
  stop(error: Error): void {
    this.failure = error;
    this.issuableUntil = Number.NEGATIVE_INFINITY;
    for (const listener of this.stopListeners) listener();
  }
  async cover(timestamp: number): Promise<void> {
    this.covers++;
    if (this.failure) throw this.failure;
    this.issuableUntil = timestamp + this.grant;
  }
}

/** Lets settled promises run their continuations. */
const flush = () => new Promise((resolve) => setImmediate(resolve));

async function until(condition: () => boolean, timeoutMs = 2000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await flush();
  }
}

/** Settles `promise` into a value we can inspect without awaiting it. */
function track<T>(promise: Promise<T>) {
  const state: { done: boolean; value?: T; error?: unknown } = { done: false };
  promise.then(
    (value) => Object.assign(state, { done: true, value }),
    (error: unknown) => Object.assign(state, { done: true, error }),
  );
  return state;
}

function setup(options: Partial<SnowflakeGeneratorOptions> = {}, floor = T0 - 1) {
  const clock = new CountingClock(T0);
  const lease = new StubLease(T0 + 60_000);
  const layout = new SnowflakeLayout(EPOCH);
  const generator = new SnowflakeGenerator(
    layout,
    7,
    clock,
    lease,
    { sequenceRandomBound: 0, clockBackwardsToleranceMs: 5, tickPollMs: 0, ...options },
    floor,
  );
  return { clock, lease, layout, generator };
}

const sequenceOf = (id: bigint) => Number(id & 4095n);
const timestampOf = (id: bigint) => Number(id >> 22n) + EPOCH;

describe('SnowflakeGenerator', () => {
  it('issues increasing IDs with its worker ID and the current millisecond', async () => {
    const { generator, layout, clock } = setup();
    const a = await generator.next();
    const b = generator.tryNext()!;
    clock.advance(1);
    const c = await generator.next();
    expect(layout.decode(a)).toMatchObject({ timestamp: T0, workerId: 7, sequence: 0 });
    expect(layout.decode(b)).toMatchObject({ timestamp: T0, workerId: 7, sequence: 1 });
    expect(layout.decode(c)).toMatchObject({ timestamp: T0 + 1, workerId: 7, sequence: 0 });
    expect(a < b && b < c).toBe(true);
  });

  it('starts each new millisecond at a random sequence below the bound', async () => {
    const draws = [0.999, 0, 0.5];
    const { generator, clock } = setup({ sequenceRandomBound: 100, random: () => draws.shift()! });
    const first = await generator.next();
    clock.advance(1);
    const second = await generator.next();
    clock.advance(1);
    const third = await generator.next();
    expect([first, second, third].map(sequenceOf)).toEqual([99, 0, 50]);
    expect(generator.tryNext()).toBe(third + 1n);
  });

  it('waits for the next millisecond when the sequence is used up, without spinning', async () => {
    const { generator, clock } = setup();
    const ids = await generator.take(4096);
    expect(new Set(ids).size).toBe(4096);
    expect(generator.tryNext()).toBeUndefined();

    const pending = track(generator.next());
    await flush();
    expect(clock.pendingSleeps).toBe(1);
    const reads = clock.reads;
    for (let i = 0; i < 20; i++) await flush();
    expect(clock.reads).toBe(reads); // asleep, not polling
    expect(pending.done).toBe(false);

    clock.advance(1);
    await until(() => pending.done);
    expect(pending.value).toBeGreaterThan(ids[4095]!);
    expect(timestampOf(pending.value!)).toBe(T0 + 1);
    expect(sequenceOf(pending.value!)).toBe(0);
  });

  it('polls the clock only for a bounded time before sleeping when the clock does not move', async () => {
    const { generator, clock } = setup({ tickPollMs: 2 });
    await generator.take(4096);
    const pending = track(generator.next());
    await until(() => clock.pendingSleeps === 1);
    const reads = clock.reads;
    for (let i = 0; i < 20; i++) await flush();
    expect(clock.reads).toBe(reads);
    clock.advance(1);
    await until(() => pending.done);
    expect(timestampOf(pending.value!)).toBe(T0 + 1);
  });

  it('catches the next millisecond promptly with the real clock', async () => {
    const layout = new SnowflakeLayout(EPOCH);
    const now = Date.now();
    const generator = new SnowflakeGenerator(
      layout,
      1,
      systemClock,
      new StubLease(now + 60_000),
      { sequenceRandomBound: 0, clockBackwardsToleranceMs: 5 },
      now - 1,
    );
    const ids = await generator.take(3 * 4096 + 10);
    for (let i = 1; i < ids.length; i++) expect(ids[i]! > ids[i - 1]!).toBe(true);
    expect(new Set(ids.map(timestampOf)).size).toBeGreaterThanOrEqual(4);
  });

  it('shares one wait between all callers of a used-up millisecond', async () => {
    const { generator, clock } = setup();
    await generator.take(4096);
    const waiters = [track(generator.next()), track(generator.next()), track(generator.take(3))];
    await flush();
    expect(clock.pendingSleeps).toBe(1);
    clock.advance(1);
    await until(() => waiters.every((w) => w.done));
    const ids = [
      waiters[0]!.value as bigint,
      waiters[1]!.value as bigint,
      ...(waiters[2]!.value as bigint[]),
    ];
    expect(new Set(ids).size).toBe(5);
    expect(ids.map(sequenceOf).sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4]);
  });

  it('fills a batch that spans milliseconds, awaiting between them', async () => {
    const { generator, clock } = setup();
    const batch = track(generator.take(10_000));
    await flush();
    expect(batch.done).toBe(false);
    expect(generator.snapshot().issued).toBe(4096); // the first millisecond, synchronously
    clock.advance(1);
    await until(() => generator.snapshot().issued === 8192);
    expect(batch.done).toBe(false);
    clock.advance(1);
    await until(() => batch.done);
    const ids = batch.value!;
    expect(ids).toHaveLength(10_000);
    for (let i = 1; i < ids.length; i++) expect(ids[i]! > ids[i - 1]!).toBe(true);
    expect(timestampOf(ids[9999]!)).toBe(T0 + 2);
  });

  it('waits out a clock that went back 3 ms (twice the offset), then issues a larger ID', async () => {
    const { generator, clock } = setup();
    const before = await generator.next();
    clock.advance(-3);
    expect(generator.tryNext()).toBeUndefined();
    const pending = track(generator.next());
    await flush();
    expect(clock.pendingSleeps).toBe(1);
    clock.advance(5);
    await flush();
    expect(pending.done).toBe(false); // 2 × 3 ms
    clock.advance(1);
    await until(() => pending.done);
    expect(pending.error).toBeUndefined();
    expect(pending.value).toBeGreaterThan(before);
    expect(timestampOf(pending.value!)).toBe(T0 + 3);
  });

  it('fails with leafCode -1 when the clock is still behind after the wait', async () => {
    const { generator, clock } = setup();
    await generator.next();
    clock.advance(-4);
    const pending = track(generator.next());
    await flush();
    expect(clock.pendingSleeps).toBe(1);
    // The 8 ms wait ends, and before the generator looks again the clock is stepped back.
    clock.set(T0 + 4);
    clock.set(T0 - 2);
    await until(() => pending.done);
    expect(pending.error).toBeInstanceOf(ClockMovedBackwardsError);
    expect(pending.error).toMatchObject({
      code: LeafErrorCode.CLOCK_MOVED_BACKWARDS,
      leafCode: -1,
      offsetMs: 2,
    });
  });

  it('refuses at once when the clock went back 50 ms, and recovers once it passes', async () => {
    const { generator, clock } = setup();
    const before = await generator.next();
    clock.advance(-50);
    const error = await generator.next().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ClockMovedBackwardsError);
    expect(error).toMatchObject({ leafCode: -3, offsetMs: 50, retryAfterMs: 51 });
    expect(clock.pendingSleeps).toBe(0);
    await expect(generator.take(3)).rejects.toBeInstanceOf(ClockMovedBackwardsError);

    clock.advance(50); // back at T0: same millisecond, sequence continues
    const same = await generator.next();
    expect(same).toBe(before + 1n);
    clock.advance(1);
    expect(await generator.next()).toBeGreaterThan(same);
  });

  it('never issues in the floor millisecond or before it', async () => {
    const { generator, clock } = setup({}, T0);
    expect(generator.tryNext()).toBeUndefined();
    const pending = track(generator.next());
    await flush();
    expect(pending.done).toBe(false);
    clock.advance(1);
    await until(() => pending.done);
    expect(timestampOf(pending.value!)).toBe(T0 + 1);
  });

  it('never issues past the lease and fails closed when it cannot be extended', async () => {
    const { generator, clock, lease } = setup();
    lease.issuableUntil = T0 + 1;
    await generator.next();
    clock.advance(1);
    const atBound = await generator.next();
    expect(timestampOf(atBound)).toBe(T0 + 1);
    clock.advance(1);
    lease.failure = new TimeLeaseUnavailableError(
      7,
      T0 + 1,
      'ZooKeeper unreachable past the local runway',
    );
    expect(generator.tryNext()).toBeUndefined();
    await expect(generator.next()).rejects.toBeInstanceOf(TimeLeaseUnavailableError);
    await expect(generator.take(5)).rejects.toBeInstanceOf(TimeLeaseUnavailableError);
    expect(generator.snapshot().lastTimestamp).toBe(T0 + 1);

    lease.failure = null;
    const after = await generator.next();
    expect(timestampOf(after)).toBe(T0 + 2);
    expect(after).toBeGreaterThan(atBound);
  });

  it('stops within the current millisecond once the lease stops for good', async () => {
    const { generator, clock, lease } = setup();
    await generator.next();
    lease.stop(new TimeLeaseUnavailableError(7, T0, 'revoked (test)'));
    expect(generator.tryNext()).toBeUndefined();
    clock.advance(1);
    await expect(generator.next()).rejects.toBeInstanceOf(TimeLeaseUnavailableError);
    await expect(generator.take(2)).rejects.toBeInstanceOf(TimeLeaseUnavailableError);
  });

  it('asks the lease to renew once per new millisecond, not per ID', async () => {
    const { generator, clock, lease } = setup();
    await generator.take(100);
    clock.advance(1);
    await generator.take(100);
    expect(lease.renewals).toBe(2);
  });

  it('refuses once the timestamp no longer fits 41 bits', async () => {
    const clock = new FakeClock(EPOCH + 2 ** 41);
    const generator = new SnowflakeGenerator(
      new SnowflakeLayout(EPOCH),
      1,
      clock,
      new StubLease(Number.MAX_SAFE_INTEGER),
      { sequenceRandomBound: 0, clockBackwardsToleranceMs: 5, tickPollMs: 0 },
      EPOCH + 2 ** 41 - 2,
    );
    clock.set(EPOCH + 2 ** 41 - 1); // the last millisecond that fits
    expect(timestampOf(await generator.next())).toBe(EPOCH + 2 ** 41 - 1);
    clock.advance(1);
    await expect(generator.next()).rejects.toMatchObject({
      code: LeafErrorCode.TIMESTAMP_OVERFLOW,
    });
    await expect(generator.next()).rejects.toBeInstanceOf(TimestampOverflowError);
  });

  it('keeps the sequence within 12 bits', async () => {
    const { generator } = setup({ sequenceRandomBound: 4095, random: () => 0.99999 });
    const ids = await generator.take(2);
    expect(ids.map(sequenceOf)).toEqual([4094, 4095]);
    expect(generator.tryNext()).toBeUndefined();
    expect(SNOWFLAKE_SEQUENCE_BITS).toBe(12);
  });
});
