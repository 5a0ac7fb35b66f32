import { TokenBucket } from './token-bucket';

describe('TokenBucket', () => {
  it('starts full, takes a cost at once, and refuses what it does not hold without taking it', () => {
    const bucket = new TokenBucket(100, 1000, 0);
    expect(bucket.take(1000, 0)).toBe(0);
    expect(bucket.available(0)).toBe(0);
    // 1 ID needs 10 ms at 100 IDs/s; nothing is taken by the refusal.
    expect(bucket.take(1, 0)).toBe(10);
    expect(bucket.take(500, 0)).toBe(5000);
    expect(bucket.available(0)).toBe(0);
  });

  it('refills continuously at its rate, never above the burst', () => {
    const bucket = new TokenBucket(100, 1000, 0);
    bucket.take(1000, 0);
    expect(bucket.available(2_500)).toBe(250);
    expect(bucket.take(250, 2_500)).toBe(0);
    expect(bucket.available(1_000_000)).toBe(1000);
    expect(bucket.take(1000, 1_000_000)).toBe(0);
  });

  it('waits what the missing part needs: 400 missing at 1,000/s is 400 ms', () => {
    const bucket = new TokenBucket(1000, 1000, 0);
    bucket.take(600, 0);
    expect(bucket.take(800, 0)).toBe(400);
    expect(bucket.take(800, 400)).toBe(0);
  });

  it('a clock that stands still or steps back refills nothing', () => {
    const bucket = new TokenBucket(100, 10, 1000);
    bucket.take(10, 1000);
    expect(bucket.take(1, 900)).toBeGreaterThan(0);
    expect(bucket.available(1000)).toBe(0);
  });
});
