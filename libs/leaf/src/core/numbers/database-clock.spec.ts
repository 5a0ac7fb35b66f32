import { DatabaseClock, databaseNowBounds } from './database-clock';

describe('databaseNowBounds', () => {
  it('widens by the round trip and the margin', () => {
    const reading = { databaseMs: 10_000, sentAt: 100, receivedAt: 140 };
    expect(databaseNowBounds(reading, 140, 5)).toEqual({ low: 9_995, high: 10_045 });
    expect(databaseNowBounds(reading, 1_140, 5)).toEqual({ low: 10_995, high: 11_045 });
  });
});

describe('DatabaseClock', () => {
  let monotonic = 0;
  let reads = 0;
  let answers: Array<(ms: number) => void> = [];
  const read = () => {
    reads++;
    return new Promise<number>((resolve) => answers.push(resolve));
  };
  const answer = (ms: number) => {
    const pending = answers;
    answers = [];
    for (const resolve of pending) resolve(ms);
  };
  const flush = () => new Promise((resolve) => setImmediate(resolve));

  beforeEach(() => {
    monotonic = 0;
    reads = 0;
    answers = [];
  });

  it('shares one query among concurrent callers and reuses it until maxAgeMs', async () => {
    const clock = new DatabaseClock(read, () => monotonic, 1000);
    const a = clock.reading();
    const b = clock.reading();
    monotonic = 20;
    answer(5_000);
    expect(await a).toEqual({ databaseMs: 5_000, sentAt: 0, receivedAt: 20 });
    expect(await b).toBe(await a);
    expect(reads).toBe(1);
    monotonic = 999;
    expect(await clock.reading()).toBe(await a);
    monotonic = 1000;
    expect(clock.current()).toBeNull();
    const c = clock.reading();
    await flush();
    answer(6_000);
    expect((await c).databaseMs).toBe(6_000);
    expect(reads).toBe(2);
  });

  it('reads again for a caller that needs a reading sent after a given time', async () => {
    const clock = new DatabaseClock(read, () => monotonic, 60_000);
    const first = clock.reading();
    answer(1);
    await first;
    monotonic = 50;
    const fresh = clock.reading(50);
    await flush();
    answer(2);
    expect(await fresh).toMatchObject({ databaseMs: 2, sentAt: 50 });
    expect(reads).toBe(2);
  });

  it('passes a failed read on and reads again next time', async () => {
    let fail = true;
    const clock = new DatabaseClock(
      () => (fail ? Promise.reject(new Error('down')) : Promise.resolve(7)),
      () => monotonic,
      1000,
    );
    await expect(clock.reading()).rejects.toThrow('down');
    fail = false;
    expect((await clock.reading()).databaseMs).toBe(7);
  });
});
