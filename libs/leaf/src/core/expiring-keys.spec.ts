import { ExpiringKeys } from './expiring-keys';

describe('ExpiringKeys', () => {
  it('remembers a key until its deadline', () => {
    const keys = new ExpiringKeys(10);
    keys.add('a', 100);
    expect(keys.has('a', 99)).toBe(true);
    expect(keys.has('a', 100)).toBe(false);
    expect(keys.size).toBe(0);
  });

  it('never holds more than its capacity, forgetting the least recently used first', () => {
    const keys = new ExpiringKeys(3);
    keys.add('a', 100);
    keys.add('b', 100);
    keys.add('c', 100);
    expect(keys.has('a', 0)).toBe(true); // a is now the most recent
    keys.add('d', 100);
    expect(keys.size).toBe(3);
    expect(keys.has('b', 0)).toBe(false);
    expect(keys.has('a', 0)).toBe(true);
    for (let i = 0; i < 10_000; i++) keys.add(`flood-${i}`, 100);
    expect(keys.size).toBe(3);
  });
});
