import { ConcurrencyLimiter } from './concurrency-limiter';

describe('ConcurrencyLimiter', () => {
  it('never runs more than the limit and releases slots on failure', async () => {
    const limiter = new ConcurrencyLimiter(2);
    let active = 0;
    let peak = 0;
    const task = (fail: boolean) => async () => {
      active++;
      peak = Math.max(peak, active);
      await new Promise((resolve) => setImmediate(resolve));
      active--;
      if (fail) throw new Error('boom');
      return 1;
    };
    const results = await Promise.allSettled(
      Array.from({ length: 10 }, (_, i) => limiter.run(task(i % 3 === 0))),
    );
    expect(peak).toBe(2);
    expect(results.filter((r) => r.status === 'rejected')).toHaveLength(4);
    expect(limiter.running).toBe(0);
    expect(limiter.waiting).toBe(0);
  });
});
